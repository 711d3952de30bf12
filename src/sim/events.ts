// Events the kubelet and controllers record (what `kubectl describe` shows under Events). A
// repeat of the same reason and message for the same object bumps `count` instead of adding an
// object, as the apiserver's event correlator does.
import { type KubeObject, newUid, timestamp } from "./object.ts";
import { lookupType } from "./resources.ts";
import type { Store } from "./store.ts";

const EVENT = lookupType("", "v1", "events")!;
const NAMESPACE = lookupType("", "v1", "namespaces")!;
/** Events expire after an hour, as with the apiserver's default --event-ttl. */
const EVENT_TTL_MS = 60 * 60 * 1000;

export interface Involved {
  apiVersion: string;
  kind: string;
  name: string;
  namespace: string;
  uid: string;
  fieldPath?: string;
}

export class EventRecorder {
  /** involved uid → (fieldPath, reason, message) → event name, for counting repeats. */
  private readonly seen = new Map<string, Map<string, string>>();
  private readonly expiry: { at: number; namespace: string; name: string }[] = [];
  private last = 0n;

  constructor(
    private readonly store: Store,
    private readonly enabled: boolean,
  ) {}

  record(involved: Involved, type: "Normal" | "Warning", reason: string, message: string, component: string): void {
    if (!this.enabled) return;
    this.expire();
    // A namespace being drained (or gone) takes no new content, events included.
    const ns = this.store.get(NAMESPACE, undefined, involved.namespace);
    if (!ns || ns.metadata.deletionTimestamp) return;
    const now = timestamp();
    const key = `${involved.fieldPath ?? ""}\0${reason}\0${message}`;
    let mine = this.seen.get(involved.uid);
    if (!mine) this.seen.set(involved.uid, (mine = new Map()));
    const existing = mine.get(key);
    if (existing && this.store.mutate(EVENT, involved.namespace, existing, (d) => {
      d.count = (d.count ?? 1) + 1;
      d.lastTimestamp = now;
    })) {
      return;
    }
    // Named like the kubelet's recorder names them (`<object>.<hex UnixNano>`), so name order is time order.
    this.last = this.last >= BigInt(Date.now()) * 1_000_000n ? this.last + 1n : BigInt(Date.now()) * 1_000_000n;
    const name = `${involved.name}.${this.last.toString(16)}`;
    const ev: KubeObject = {
      apiVersion: "v1",
      kind: "Event",
      metadata: { name, namespace: involved.namespace, uid: newUid(), creationTimestamp: now },
      involvedObject: { ...involved },
      reason,
      message,
      type,
      source: component === "kubelet" ? { component, host: "sim-node" } : { component },
      firstTimestamp: now,
      lastTimestamp: now,
      count: 1,
      reportingComponent: component,
      reportingInstance: component === "kubelet" ? "sim-node" : "",
    };
    this.store.write(EVENT, ev, "ADDED");
    mine.set(key, name);
    this.expiry.push({ at: Date.now() + EVENT_TTL_MS, namespace: involved.namespace, name });
  }

  private expire(): void {
    while (this.expiry.length > 0 && this.expiry[0]!.at <= Date.now()) {
      const e = this.expiry.shift()!;
      this.store.remove(EVENT, e.namespace, e.name);
    }
  }

  /** Forget correlation state of an object that is gone. */
  forget(uid: string): void {
    this.seen.delete(uid);
  }
}
