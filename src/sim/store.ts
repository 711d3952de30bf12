// The object store: one resourceVersion sequence for every type (like etcd's revision), one
// collection per resource type, and in-process listeners for the simulated controllers. Stored
// objects are never mutated in place; a change stores a new object and publishes an event.
import { type KubeObject, keyOf, objectKey, clone } from "./object.ts";
import { RESOURCE_TYPES, type ResourceType, apiVersionOf, typeKey } from "./resources.ts";
import { renderTable } from "./table.ts";
import { WatchHub, type EventType, type StoreEvent, type WatchCacheSizing } from "./watch.ts";

export type Listener = (ev: StoreEvent) => void;

export interface Collection {
  type: ResourceType;
  objects: Map<string, KubeObject>;
  hub: WatchHub;
}

export class Store {
  private rv = 1;
  private readonly collections = new Map<string, Collection>();
  private readonly listeners = new Map<string, Listener[]>();
  /**
   * Controllers hear events one at a time in write order: a write made by a listener is queued
   * behind the event being handled, so no listener sees a later state before an earlier one.
   */
  private readonly queue: { listener: Listener; ev: StoreEvent }[] = [];
  private draining = false;

  constructor(watchCache: WatchCacheSizing) {
    for (const type of RESOURCE_TYPES) {
      this.collections.set(typeKey(type), {
        type,
        objects: new Map(),
        hub: new WatchHub(type.kind, apiVersionOf(type), watchCache, this.rv, (obj) => renderTable(type, [obj], obj.metadata.resourceVersion ?? "")),
      });
    }
  }

  currentRv(): number {
    return this.rv;
  }

  collection(type: ResourceType): Collection {
    return this.collections.get(typeKey(type))!;
  }

  allCollections(): Iterable<Collection> {
    return this.collections.values();
  }

  get(type: ResourceType, namespace: string | undefined, name: string): KubeObject | undefined {
    return this.collection(type).objects.get(objectKey(namespace, name));
  }

  /** Objects of a type, optionally in one namespace, in key order (stable pagination). */
  list(type: ResourceType, namespace?: string): KubeObject[] {
    const out: [string, KubeObject][] = [];
    for (const [key, obj] of this.collection(type).objects) {
      if (namespace === undefined || obj.metadata.namespace === namespace) out.push([key, obj]);
    }
    return out.sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)).map(([, obj]) => obj);
  }

  count(type: ResourceType, namespace?: string, predicate?: (o: KubeObject) => boolean): number {
    let n = 0;
    for (const obj of this.collection(type).objects.values()) {
      if (namespace !== undefined && obj.metadata.namespace !== namespace) continue;
      if (!predicate || predicate(obj)) n++;
    }
    return n;
  }

  /** Stores `obj` (already validated and defaulted) with a fresh resourceVersion. */
  write(type: ResourceType, obj: KubeObject, eventType: Exclude<EventType, "DELETED">): KubeObject {
    const c = this.collection(type);
    const key = keyOf(obj);
    const old = c.objects.get(key);
    const rv = ++this.rv;
    obj.metadata.resourceVersion = String(rv);
    c.objects.set(key, obj);
    const ev: StoreEvent = { type: eventType, object: obj, rv };
    if (old) ev.old = old;
    this.emit(c, ev);
    return obj;
  }

  remove(type: ResourceType, namespace: string | undefined, name: string): KubeObject | undefined {
    const c = this.collection(type);
    const key = objectKey(namespace, name);
    const old = c.objects.get(key);
    if (!old) return undefined;
    c.objects.delete(key);
    const rv = ++this.rv;
    const gone = clone(old);
    gone.metadata.resourceVersion = String(rv);
    this.emit(c, { type: "DELETED", object: gone, old, rv });
    return gone;
  }

  /**
   * Read-modify-write for controllers: `fn` edits a copy; returning false skips the write.
   * Missing objects are ignored (a controller racing a delete loses quietly, like a 404).
   */
  mutate(type: ResourceType, namespace: string | undefined, name: string, fn: (draft: KubeObject) => boolean | void): KubeObject | undefined {
    const cur = this.get(type, namespace, name);
    if (!cur) return undefined;
    const draft = clone(cur);
    if (fn(draft) === false) return cur;
    return this.write(type, draft, "MODIFIED");
  }

  on(type: ResourceType, listener: Listener): void {
    const k = typeKey(type);
    const list = this.listeners.get(k) ?? [];
    list.push(listener);
    this.listeners.set(k, list);
  }

  /** Compaction at the current version: watches from any older resourceVersion get 410. */
  expireAll(): void {
    for (const c of this.collections.values()) c.hub.expire(this.rv);
  }

  private emit(c: Collection, ev: StoreEvent): void {
    c.hub.record(ev);
    for (const listener of this.listeners.get(typeKey(c.type)) ?? []) this.queue.push({ listener, ev });
    this.drain();
  }

  private drain(): void {
    if (this.draining) return;
    this.draining = true;
    try {
      while (this.queue.length > 0) {
        const { listener, ev } = this.queue.shift()!;
        try {
          listener(ev);
        } catch (err) {
          // A controller bug must not take the API server down with it.
          console.error("[sim] controller error:", err);
        }
      }
    } finally {
      this.draining = false;
    }
  }
}
