// Fan-out of store events to open watch streams. Each event is serialised once and the same
// line is written to every watcher it matches; watchers are bucketed by namespace and by the
// `metadata.name` field selector so a pod event does not visit 2,000 unrelated watchers. A
// history sized as kube-apiserver's watch cache sizes it backs `resourceVersion` resumption;
// anything older gets 410 Expired.
import type { ServerResponse } from "node:http";
import type { KubeObject } from "./object.ts";
import type { Matcher } from "./selectors.ts";
import { expired } from "./status.ts";

export type EventType = "ADDED" | "MODIFIED" | "DELETED";

export interface StoreEvent {
  type: EventType;
  object: KubeObject;
  /** The object before this change (MODIFIED and DELETED). */
  old?: KubeObject;
  rv: number;
}

export interface WatchFilter {
  namespace?: string;
  label?: Matcher;
  field?: Matcher;
  exactName?: string;
}

interface Watcher extends WatchFilter {
  res: ServerResponse;
  /** The version the watch starts after: an event at or before it reached the client by its list or backlog. */
  fromRv: number;
  /** Server-side printing: events carry single-row Tables instead of objects. */
  table: boolean;
  bookmarks: boolean;
  timer?: NodeJS.Timeout;
  closed: boolean;
}

/** Renders one object as a single-row meta.k8s.io Table, for `kubectl get --watch`. */
export type TableRenderer = (obj: KubeObject) => unknown;

/** Lines of one event, built on first use and shared by every watcher that receives it. */
class EventLines {
  private objectJson?: string;
  private readonly lines = new Map<string, string>();
  constructor(private readonly ev: StoreEvent) {}

  line(type: EventType | "DELETED_PREV", table?: TableRenderer): string {
    const key = table ? `${type}/table` : type;
    let l = this.lines.get(key);
    if (l === undefined) {
      let obj: KubeObject | undefined;
      if (type === "DELETED_PREV") {
        // An object leaving a watcher's selector: the apiserver sends its previous state
        // stamped with the new resourceVersion.
        obj = structuredClone(this.ev.old!);
        obj.metadata.resourceVersion = String(this.ev.rv);
      }
      const wire = type === "DELETED_PREV" ? "DELETED" : type;
      let json: string;
      if (table) json = JSON.stringify(table(obj ?? this.ev.object));
      else if (obj) json = JSON.stringify(obj);
      else json = this.objectJson ??= JSON.stringify(this.ev.object);
      l = `{"type":"${wire}","object":${json}}\n`;
      this.lines.set(key, l);
    }
    return l;
  }
}

/**
 * How kube-apiserver's watch cache keeps history, per resource type: capacity starts at the
 * lower bound and doubles (up to the upper bound) while the cache is full of events younger than
 * `eventFreshMs`, halves when its newest quarter is older than that; a full cache forgets its
 * oldest event. So at least the last 75 s are kept (unless more than the upper bound happened in
 * them), and a quiet type forgets what lies beyond its last 100 events.
 */
export interface WatchCacheSizing {
  lowerBound: number;
  upperBound: number;
  eventFreshMs: number;
  /** The clock events are stamped with. */
  now: () => number;
}

export const APISERVER_WATCH_CACHE: Omit<WatchCacheSizing, "now"> = { lowerBound: 100, upperBound: 100 * 1024, eventFreshMs: 75_000 };

/** Writes beyond this many buffered bytes mark a watcher as too slow; it is closed like the apiserver closes it. */
const SLOW_WATCHER_BYTES = 32 * 1024 * 1024;

export class WatchHub {
  private readonly history: StoreEvent[] = [];
  /** When each event of `history` was recorded, by the sizing's clock. */
  private readonly recordedAt: number[] = [];
  private historyStart = 0;
  private capacity: number;
  /** The version the cache started from (or was compacted at). */
  private startRv: number;
  /** Whether an event was forgotten since then. */
  private forgotten = false;
  private readonly clusterWide = new Set<Watcher>();
  private readonly byNamespace = new Map<string, Set<Watcher>>();
  private readonly byName = new Map<string, Set<Watcher>>();
  private count = 0;
  /** How long each event waits before it is sent to the open watches (a watch cache behind etcd); lists never wait. */
  private lagMs = 0;
  /** Events recorded and not yet sent (a lag), oldest first: sent in that order, never to a watch that starts after them. */
  private readonly unsent: StoreEvent[] = [];

  constructor(
    private readonly kind: string,
    private readonly apiVersion: string,
    private readonly sizing: WatchCacheSizing,
    startRv: number,
    readonly table: TableRenderer,
  ) {
    this.capacity = sizing.lowerBound;
    this.startRv = startRv;
  }

  get openWatches(): number {
    return this.count;
  }

  record(ev: StoreEvent): void {
    const now = this.sizing.now();
    this.resize(now);
    if (this.history.length - this.historyStart >= this.capacity) this.forget(this.history.length - this.historyStart - this.capacity + 1);
    this.history.push(ev);
    this.recordedAt.push(now);
    if (this.lagMs === 0 && this.unsent.length === 0) return this.publish(ev);
    this.unsent.push(ev);
    setTimeout(() => this.sendUpTo(ev), this.lagMs);
  }

  /** From now on each event reaches the open watches `ms` after it happened (0: at once; what is held still goes in order). */
  lag(ms: number): void {
    this.lagMs = ms;
  }

  /** Sends the held events up to `ev` (an earlier lag's events may be held longer than a later one's). */
  private sendUpTo(ev: StoreEvent): void {
    const index = this.unsent.indexOf(ev);
    for (const held of index === -1 ? [] : this.unsent.splice(0, index + 1)) this.publish(held);
  }

  /** The version a bookmark may carry: not past an event the watches have not been sent yet. */
  bookmarkRv(current: number): number {
    const oldestUnsent = this.unsent[0];
    return oldestUnsent ? oldestUnsent.rv - 1 : current;
  }

  /** The watch cache's resizing, decided before each event is added (resizeCacheLocked). */
  private resize(now: number): void {
    const size = this.history.length - this.historyStart;
    if (size < this.capacity) return;
    const { lowerBound, upperBound, eventFreshMs } = this.sizing;
    if (now - this.recordedAt[this.historyStart]! < eventFreshMs) this.capacity = Math.min(this.capacity * 2, upperBound);
    else if (now - this.recordedAt[this.history.length - Math.floor(this.capacity / 4)]! > eventFreshMs) {
      this.capacity = Math.max(Math.floor(this.capacity / 2), lowerBound);
    }
  }

  /** Drops the `n` oldest events: resuming from before what is left is now 410. */
  private forget(n: number): void {
    this.historyStart += n;
    this.forgotten = true;
    // Compact the backing arrays now and then instead of shifting on every event.
    if (this.historyStart > this.capacity) {
      this.history.splice(0, this.historyStart);
      this.recordedAt.splice(0, this.historyStart);
      this.historyStart = 0;
    }
  }

  /** Forget all history: a watch from before `rv` now answers 410 (from `rv` itself still works). */
  expire(rv: number): void {
    this.history.length = 0;
    this.recordedAt.length = 0;
    this.historyStart = 0;
    this.startRv = rv;
    this.forgotten = false;
  }

  /**
   * A watch from a resourceVersion older than this gets 410: the start until an event is
   * forgotten, then the version just before the oldest event kept (getAllEventsSinceLocked).
   */
  private oldestResumable(): number {
    const first = this.history[this.historyStart];
    return this.forgotten && first ? first.rv - 1 : this.startRv;
  }

  /** Events after `rv` that the filter admits, or 410 when `rv` is older than the history kept. */
  since(rv: number, filter: WatchFilter): { type: EventType | "DELETED_PREV"; lines: EventLines }[] {
    const oldest = this.oldestResumable();
    if (rv < oldest) throw expired(`too old resource version: ${rv} (${oldest})`);
    const out: { type: EventType | "DELETED_PREV"; lines: EventLines }[] = [];
    // History is in resourceVersion order: find the first later event by bisection.
    let lo = this.historyStart;
    let hi = this.history.length;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (this.history[mid]!.rv <= rv) lo = mid + 1;
      else hi = mid;
    }
    // What a lag still holds is sent to this watch with the rest, later.
    const unsentFrom = this.unsent[0]?.rv ?? Number.POSITIVE_INFINITY;
    for (let i = lo; i < this.history.length && this.history[i]!.rv < unsentFrom; i++) {
      const ev = this.history[i]!;
      const t = classify(ev, filter);
      if (t) out.push({ type: t, lines: new EventLines(ev) });
    }
    return out;
  }

  add(res: ServerResponse, filter: WatchFilter, opts: { bookmarks: boolean; table: boolean; fromRv: number }, timeoutMs: number, onTimeout: () => void): Watcher {
    const w: Watcher = { ...filter, res, bookmarks: opts.bookmarks, table: opts.table, fromRv: opts.fromRv, closed: false };
    this.bucketFor(w).add(w);
    this.count++;
    w.timer = setTimeout(onTimeout, timeoutMs);
    res.on("close", () => this.remove(w));
    return w;
  }

  remove(w: Watcher): void {
    if (w.closed) return;
    w.closed = true;
    clearTimeout(w.timer);
    const bucket = this.bucketFor(w);
    bucket.delete(w);
    if (bucket.size === 0 && bucket !== this.clusterWide) {
      if (w.exactName !== undefined) this.byName.delete(nameKey(w.namespace, w.exactName));
      else if (w.namespace !== undefined) this.byNamespace.delete(w.namespace);
    }
    this.count--;
  }

  write(w: Watcher, line: string): void {
    if (w.closed) return;
    if (w.res.writableLength > SLOW_WATCHER_BYTES) {
      this.close(w);
      return;
    }
    w.res.write(line);
  }

  writeEvent(w: Watcher, type: EventType | "DELETED_PREV", lines: EventLines): void {
    this.write(w, w.table ? lines.line(type, this.table) : lines.line(type));
  }

  bookmarkLine(rv: number): string {
    return `{"type":"BOOKMARK","object":{"kind":"${this.kind}","apiVersion":"${this.apiVersion}","metadata":{"resourceVersion":"${rv}","creationTimestamp":null}}}\n`;
  }

  /** Periodic progress notification to every watcher that asked for bookmarks. */
  bookmarkAll(rv: number): void {
    if (this.count === 0) return;
    const line = this.bookmarkLine(this.bookmarkRv(rv));
    for (const w of this.allWatchers()) if (w.bookmarks) this.write(w, line);
  }

  close(w: Watcher): void {
    this.remove(w);
    w.res.end();
  }

  closeAll(): void {
    for (const w of [...this.allWatchers()]) this.close(w);
  }

  private *allWatchers(): Iterable<Watcher> {
    yield* this.clusterWide;
    for (const s of this.byNamespace.values()) yield* s;
    for (const s of this.byName.values()) yield* s;
  }

  private bucketFor(w: Watcher): Set<Watcher> {
    let map: Map<string, Set<Watcher>>;
    let key: string;
    if (w.exactName !== undefined) {
      map = this.byName;
      key = nameKey(w.namespace, w.exactName);
    } else if (w.namespace !== undefined) {
      map = this.byNamespace;
      key = w.namespace;
    } else return this.clusterWide;
    let s = map.get(key);
    if (!s) {
      s = new Set();
      map.set(key, s);
    }
    return s;
  }

  private publish(ev: StoreEvent): void {
    if (this.count === 0) return;
    const lines = new EventLines(ev);
    const ns = ev.object.metadata.namespace;
    const name = ev.object.metadata.name;
    const buckets = [
      this.clusterWide,
      ns !== undefined ? this.byNamespace.get(ns) : undefined,
      this.byName.get(nameKey(ns, name)),
      ns !== undefined ? this.byName.get(nameKey(undefined, name)) : undefined,
    ];
    for (const bucket of buckets) {
      if (!bucket) continue;
      for (const w of bucket) {
        if (ev.rv <= w.fromRv) continue;
        const t = classify(ev, w);
        if (t) this.writeEvent(w, t, lines);
      }
    }
  }
}

function nameKey(namespace: string | undefined, name: string): string {
  return `${namespace ?? "*"}/${name}`;
}

function admits(obj: KubeObject, f: WatchFilter): boolean {
  if (f.namespace !== undefined && obj.metadata.namespace !== f.namespace) return false;
  if (f.label && !f.label(obj)) return false;
  if (f.field && !f.field(obj)) return false;
  return true;
}

/** Which event a watcher sees, given whether the object matched before and after the change. */
function classify(ev: StoreEvent, f: WatchFilter): EventType | "DELETED_PREV" | undefined {
  if (ev.type === "ADDED") return admits(ev.object, f) ? "ADDED" : undefined;
  if (ev.type === "DELETED") return admits(ev.object, f) ? "DELETED" : undefined;
  const now = admits(ev.object, f);
  const before = ev.old ? admits(ev.old, f) : false;
  if (now && before) return "MODIFIED";
  if (now) return "ADDED";
  if (before) return "DELETED_PREV";
  return undefined;
}

