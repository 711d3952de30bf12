// The garbage collector and namespace controller: dependents follow their owners (by
// ownerReference uid, background by default, orphaned or foreground when the owner asked),
// dependents of an owner that never existed are collected, and a terminating namespace is
// emptied before it is removed.
import { deleteObject, FOREGROUND_FINALIZER, ORPHAN_FINALIZER } from "./deletion.ts";
import type { KubeObject } from "./object.ts";
import { RESOURCE_TYPES, lookupType, type ResourceType } from "./resources.ts";
import type { Store } from "./store.ts";
import type { StoreEvent } from "./watch.ts";

interface Ref {
  type: ResourceType;
  namespace: string | undefined;
  name: string;
}

const NAMESPACE = lookupType("", "v1", "namespaces")!;

export class GarbageCollector {
  /** owner uid → dependents referencing it */
  private readonly dependents = new Map<string, Map<string, Ref>>();
  /** uid → the live object carrying it */
  private readonly live = new Map<string, Ref>();
  private readonly timers = new Set<NodeJS.Timeout>();
  /** Owners waiting in foreground deletion for their dependents to go. */
  private readonly foreground = new Set<string>();

  constructor(
    private readonly store: Store,
    private readonly danglingCheckMs: number,
  ) {
    for (const type of RESOURCE_TYPES) store.on(type, (ev) => this.onEvent(type, ev));
  }

  stop(): void {
    for (const t of this.timers) clearTimeout(t);
    this.timers.clear();
  }

  private later(fn: () => void, ms: number): void {
    const t = setTimeout(() => {
      this.timers.delete(t);
      fn();
    }, ms);
    this.timers.add(t);
  }

  private onEvent(type: ResourceType, ev: StoreEvent): void {
    const obj = ev.object;
    const ref: Ref = { type, namespace: obj.metadata.namespace, name: obj.metadata.name };
    const uid = obj.metadata.uid!;
    const depKey = `${type.plural}.${type.group}/${obj.metadata.namespace ?? ""}/${obj.metadata.name}`;
    for (const o of ev.old?.metadata.ownerReferences ?? []) this.dependents.get(o.uid)?.delete(depKey);

    if (ev.type === "DELETED") {
      this.live.delete(uid);
      this.collectDependentsOf(uid);
      if (type.namespaced) this.maybeFinishNamespace(obj.metadata.namespace!);
      return;
    }
    this.live.set(uid, ref);
    for (const o of obj.metadata.ownerReferences ?? []) {
      let deps = this.dependents.get(o.uid);
      if (!deps) this.dependents.set(o.uid, (deps = new Map()));
      deps.set(depKey, ref);
      // The real collector verifies an unknown owner before acting; so does this one.
      if (ev.type === "ADDED" && !this.live.has(o.uid)) this.later(() => this.collectIfOrphaned(ref), this.danglingCheckMs);
    }
    if (obj.metadata.deletionTimestamp) this.onDeleting(type, obj);
  }

  private onDeleting(type: ResourceType, obj: KubeObject): void {
    if (type === NAMESPACE) {
      this.drainNamespace(obj.metadata.name);
      return;
    }
    const finalizers = obj.metadata.finalizers ?? [];
    const uid = obj.metadata.uid!;
    if (finalizers.includes(ORPHAN_FINALIZER)) {
      for (const dep of [...(this.dependents.get(uid)?.values() ?? [])]) {
        this.store.mutate(dep.type, dep.namespace, dep.name, (d) => {
          d.metadata.ownerReferences = (d.metadata.ownerReferences ?? []).filter((o) => o.uid !== uid);
          if (d.metadata.ownerReferences.length === 0) delete d.metadata.ownerReferences;
        });
      }
      this.removeFinalizer(type, obj, ORPHAN_FINALIZER);
    } else if (finalizers.includes(FOREGROUND_FINALIZER)) {
      const deps = [...(this.dependents.get(uid)?.values() ?? [])];
      if (deps.length === 0) this.removeFinalizer(type, obj, FOREGROUND_FINALIZER);
      else {
        this.foreground.add(uid);
        for (const dep of deps) this.tryDelete(dep);
      }
    }
  }

  private removeFinalizer(type: ResourceType, obj: KubeObject, finalizer: string): void {
    const after = this.store.mutate(type, obj.metadata.namespace, obj.metadata.name, (d) => {
      d.metadata.finalizers = (d.metadata.finalizers ?? []).filter((f) => f !== finalizer);
      if (d.metadata.finalizers.length === 0) delete d.metadata.finalizers;
    });
    if (after && !after.metadata.finalizers?.length && !((after.metadata.deletionGracePeriodSeconds ?? 0) > 0)) {
      this.store.remove(type, after.metadata.namespace, after.metadata.name);
    }
  }

  private collectDependentsOf(uid: string): void {
    const deps = this.dependents.get(uid);
    this.dependents.delete(uid);
    for (const dep of deps?.values() ?? []) {
      const cur = this.store.get(dep.type, dep.namespace, dep.name);
      if (!cur) continue;
      const remaining = (cur.metadata.ownerReferences ?? []).filter((o) => o.uid !== uid && this.live.has(o.uid));
      if (remaining.length > 0) {
        this.store.mutate(dep.type, dep.namespace, dep.name, (d) => {
          d.metadata.ownerReferences = (d.metadata.ownerReferences ?? []).filter((o) => o.uid !== uid);
        });
      } else this.tryDelete(dep);
    }
    // An owner waiting in foreground deletion goes once its last dependent has gone.
    for (const ownerUid of this.foreground) {
      if ((this.dependents.get(ownerUid)?.size ?? 0) > 0) continue;
      this.foreground.delete(ownerUid);
      const ref = this.live.get(ownerUid);
      const owner = ref && this.store.get(ref.type, ref.namespace, ref.name);
      if (ref && owner) this.removeFinalizer(ref.type, owner, FOREGROUND_FINALIZER);
    }
  }

  private collectIfOrphaned(ref: Ref): void {
    const cur = this.store.get(ref.type, ref.namespace, ref.name);
    if (!cur) return;
    const owners = cur.metadata.ownerReferences ?? [];
    if (owners.length > 0 && owners.every((o) => !this.live.has(o.uid))) this.tryDelete(ref);
  }

  private tryDelete(ref: Ref): void {
    try {
      deleteObject(this.store, ref.type, ref.namespace, ref.name, { propagationPolicy: "Background" });
    } catch {
      // already gone
    }
  }

  private drainNamespace(namespace: string): void {
    for (const type of RESOURCE_TYPES) {
      if (!type.namespaced) continue;
      for (const obj of this.store.list(type, namespace)) {
        if (!obj.metadata.deletionTimestamp) this.tryDelete({ type, namespace, name: obj.metadata.name });
      }
    }
    this.maybeFinishNamespace(namespace);
  }

  private maybeFinishNamespace(namespace: string): void {
    const ns = this.store.get(NAMESPACE, undefined, namespace);
    if (!ns?.metadata.deletionTimestamp) return;
    for (const type of RESOURCE_TYPES) {
      if (type.namespaced && this.store.count(type, namespace) > 0) return;
    }
    this.store.remove(NAMESPACE, undefined, namespace);
  }
}
