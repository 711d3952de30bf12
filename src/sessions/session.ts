/**
 * One session as the supervisor holds it: its status, its apps' byte channels, its event
 * history, and who is watching. In memory only; no I/O.
 */
import type { CatalogEntry } from "../config/apps-catalog.ts";
import {
  type ByteStreamTag,
  type CheckpointFile,
  type EndpointChange,
  type PortMapping,
  type ResolvedApp,
  type RunEvent,
  type RunStatus,
  type RunTrigger,
  type SessionDocument,
  type SessionMode,
  type TimelineEntry,
  isTerminal,
} from "../contract/wire.ts";
import type { StartSpec, Workload } from "./backend-seam.ts";
import { ReloadBudget } from "./reload-budget.ts";
import { ReplayRing } from "./replay-ring.ts";
import { RunProjection } from "./run-projection.ts";
import { withEntry } from "./timeline.ts";

/** A stored event: its SSE name, its JSON, and whether it ends the session's stream. */
export type EventRecord = { type: RunEvent["type"]; json: string; terminal: boolean };
export type ByteChunk = { tag: ByteStreamTag; bytes: Buffer };

/** Chunks larger than this are split so one replay frame stays small (docs/api.md "The registry"). */
export const MAX_CHUNK_BYTES = 64 * 1024;

export class AppChannel {
  readonly bytes: ReplayRing<ByteChunk>;
  readonly run: RunProjection;
  ports: PortMapping[];

  constructor(
    readonly name: string,
    readonly io: "tty" | "streams",
    ports: PortMapping[],
    replayBufferBytes: number,
    initialTrigger: RunTrigger,
    firstSeq: number,
  ) {
    this.ports = [...ports];
    this.bytes = new ReplayRing(replayBufferBytes, firstSeq);
    this.run = new RunProjection(name, initialTrigger);
  }
}

export type SessionInit = {
  launch: StartSpec;
  agent: CatalogEntry | undefined;
  replayBufferBytes: number;
  reloadLimit: number;
  now: Date;
  /**
   * First event id and byte seq: 1 for a new session. A session re-adopted after a
   * supervisor restart lost its history, so its streams start past anything a client can
   * hold (see adoptedStreamBase): a reconnecting client sees a gap, never a false match.
   */
  firstStreamId?: number;
  /** An app's first byte seq when it differs from firstStreamId (a session handed over by another replica). */
  firstSeqOf?: (app: string) => number;
};

/** Seconds since 2024 — above any id an earlier process handed out, below 2^32 for a century. */
export function adoptedStreamBase(now: number): number {
  return Math.floor((now - Date.UTC(2024, 0, 1)) / 1000);
}

type ChangeListener = () => void;

/** The last snapshot of a watch session's workspace: what a resume starts from. */
export type Checkpoint = { files: CheckpointFile[]; at: number };

export class Session {
  readonly id: string;
  readonly mode: SessionMode;
  readonly createdAt: Date;
  readonly events: ReplayRing<EventRecord>;
  readonly apps = new Map<string, AppChannel>();
  readonly agent: CatalogEntry | undefined;
  status: RunStatus = { kind: "starting" };
  /** The start's stages and the runs' ends (docs/api.md "The timeline"); admitted when created. */
  timeline: TimelineEntry[];
  exitedAt: Date | undefined;
  subscribers = 0;
  /** When the last subscriber left (or registration); null while anyone watches. */
  idleSince: number | null;
  suspendedAt: number | undefined;
  readonly reloadBudget: ReloadBudget;
  #launch: StartSpec;
  #userStopped = false;
  #stopRequested = new AbortController();
  #workload: Workload | undefined;
  #checkpoint: Checkpoint | undefined;
  readonly #replayBufferBytes: number;
  readonly #firstStreamId: number;
  readonly #firstSeqOf: ((app: string) => number) | undefined;
  readonly #listeners = new Set<ChangeListener>();
  #pendingOutput: { app: AppChannel; tag: ByteStreamTag; chunks: Buffer[]; bytes: number } | undefined;
  #flushScheduled = false;
  #disposed = false;
  #moved = false;

  constructor(init: SessionInit) {
    this.id = init.launch.sessionId;
    this.mode = init.launch.mode;
    this.createdAt = init.now;
    this.timeline = [{ stage: "admitted", at: init.now.toISOString() }];
    this.#launch = init.launch;
    this.agent = init.agent;
    this.idleSince = init.now.getTime();
    this.#replayBufferBytes = init.replayBufferBytes;
    this.#firstStreamId = init.firstStreamId ?? 1;
    this.#firstSeqOf = init.firstSeqOf;
    this.reloadBudget = new ReloadBudget(init.reloadLimit);
    this.events = new ReplayRing(init.replayBufferBytes, this.#firstStreamId);
    for (const app of init.launch.apps) this.addApp(app, "initial");
  }

  get terminal(): boolean {
    return isTerminal(this.status);
  }

  get disposed(): boolean {
    return this.#disposed;
  }

  /** Disposed because another replica serves it now (not evicted): followers reconnect there. */
  get moved(): boolean {
    return this.#moved;
  }

  /** Retained launch description: resume and app-set changes start from it. */
  get launch(): StartSpec {
    return this.#launch;
  }

  /** Set by a DELETE or a shutdown; a workload that ends afterwards ended because of it. */
  get userStopped(): boolean {
    return this.#userStopped;
  }

  /** Fired by a user stop; handed to the backend with the start (see BackendCallbacks). */
  get stopSignal(): AbortSignal {
    return this.#stopRequested.signal;
  }

  /** The live workload, once its start has settled and until it ends or is suspended. */
  get workload(): Workload | undefined {
    return this.#workload;
  }

  get checkpoint(): Checkpoint | undefined {
    return this.#checkpoint;
  }

  requestStop(): void {
    this.#userStopped = true;
    this.#stopRequested.abort();
  }

  /** The workload started: it is live until it ends (or a later one replaces it). */
  attachWorkload(workload: Workload): void {
    this.#workload = workload;
    void workload.done.then(() => {
      if (this.#workload === workload) this.#workload = undefined;
    });
  }

  /** The workload was suspended: nothing is live until a resume. */
  detachWorkload(): void {
    this.#workload = undefined;
  }

  recordCheckpoint(files: CheckpointFile[], at: number): void {
    this.#checkpoint = { files, at };
  }

  /**
   * Makes a suspended session startable again: a fresh stop signal, its apps' next runs
   * triggered by the resume, and the bundle rebuilt from the checkpoint.
   */
  prepareResume(checkpoint: Checkpoint, now: number): void {
    this.setNextTrigger("resume");
    // A resumed session gets a whole idle window for its client to come back, not what was
    // left of the one that suspended it.
    if (this.subscribers === 0) this.idleSince = now;
    this.#workload = undefined;
    this.#userStopped = false;
    this.#stopRequested = new AbortController();
    const entry = this.#launch.apps[0]?.entryRelativePath || "telo.yaml";
    this.#launch = {
      ...this.#launch,
      bundle: {
        entryRelativePath: entry,
        files: checkpoint.files.map((file) => ({ relativePath: file.path, contents: file.content, encoding: file.encoding })),
      },
    };
  }

  /** What triggers the next run of the named apps (all when none are named). */
  setNextTrigger(trigger: RunTrigger, names: string[] = [...this.apps.keys()]): void {
    for (const name of names) this.apps.get(name)?.run.setNextTrigger(trigger);
  }

  /** The app set became `apps`: channels of dropped apps go, the launch description follows. */
  replaceApps(apps: ResolvedApp[]): void {
    const kept = new Set(apps.map((app) => app.name));
    for (const name of [...this.apps.keys()]) if (!kept.has(name)) this.apps.delete(name);
    this.#launch = { ...this.#launch, apps };
  }

  removeApps(names: string[]): void {
    for (const name of names) this.apps.delete(name);
  }

  addApp(app: ResolvedApp, trigger: RunTrigger): void {
    if (this.apps.has(app.name)) return;
    this.apps.set(app.name, new AppChannel(app.name, app.io, app.ports, this.#replayBufferBytes, trigger, this.#firstSeqOf?.(app.name) ?? this.#firstStreamId));
  }

  /** The only app, when there is exactly one (the WebSocket's default target). */
  get soleApp(): AppChannel | undefined {
    return this.apps.size === 1 ? [...this.apps.values()][0] : undefined;
  }

  /** Appends an event to the history and tells every follower; returns its id. */
  append(event: RunEvent): number {
    this.flushOutput();
    if (event.type === "status") this.status = event.status;
    const json = JSON.stringify(event);
    const terminal = event.type === "status" && isTerminal(event.status);
    const id = this.events.push({ type: event.type, json, terminal }, Buffer.byteLength(json));
    this.#notify();
    return id;
  }

  /**
   * Output for an app; unknown apps are dropped (docs/api.md "The registry"). The first chunk of an
   * event-loop turn goes out at once, so a keystroke's echo waits for no later turn
   * (the echo round trip); chunks arriving after it within the same turn for the same app and stream
   * are merged and go out at the turn's end: a terminal that echoes byte by byte would
   * otherwise cost a frame, a seq and a WebSocket message per byte on both processes. Every
   * event flushes first, so output always precedes the status that follows it.
   */
  pushOutput(appName: string, bytes: Uint8Array, tag: ByteStreamTag): void {
    const app = this.apps.get(appName);
    if (!app || bytes.byteLength === 0) return;
    const pending = this.#pendingOutput;
    if (pending && (pending.app !== app || pending.tag !== tag || pending.bytes + bytes.byteLength > MAX_CHUNK_BYTES)) {
      this.flushOutput();
    }
    const next = (this.#pendingOutput ??= { app, tag, chunks: [], bytes: 0 });
    next.chunks.push(Buffer.from(bytes));
    next.bytes += bytes.byteLength;
    if (this.#flushScheduled) return;
    this.#flushScheduled = true;
    setImmediate(() => {
      this.#flushScheduled = false;
      this.flushOutput();
    });
    this.flushOutput();
  }

  /** Moves merged output into its app's replay buffer, in slices of at most 64 KiB. */
  flushOutput(): void {
    const pending = this.#pendingOutput;
    if (!pending) return;
    this.#pendingOutput = undefined;
    const joined = pending.chunks.length === 1 ? pending.chunks[0]! : Buffer.concat(pending.chunks, pending.bytes);
    for (let offset = 0; offset < joined.byteLength; offset += MAX_CHUNK_BYTES) {
      const slice = joined.subarray(offset, offset + MAX_CHUNK_BYTES);
      pending.app.bytes.push({ tag: pending.tag, bytes: slice }, slice.byteLength);
    }
    this.#notify();
  }


  /** Applies an endpoint change to the app's ports before it is announced (docs/api.md "Debug and port events"). */
  applyEndpointChange(appName: string, change: EndpointChange): void {
    const app = this.apps.get(appName);
    if (!app) return;
    const key = (port: { port: number; protocol: string }) => `${port.protocol}/${port.port}`;
    const removed = new Set((change.removed ?? []).map(key));
    app.ports = app.ports.filter((port) => !removed.has(key(port)));
    for (const added of change.added ?? []) {
      if (!app.ports.some((port) => key(port) === key(added))) {
        app.ports.push({ port: added.port, protocol: added.protocol });
      }
    }
  }

  /** Adds a stage or a run's end to the timeline, in its place by time. */
  record(entry: TimelineEntry): void {
    this.timeline = withEntry(this.timeline, entry);
  }

  onChange(listener: ChangeListener): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }

  /** Ends every follower: the session was evicted, or (`moved`) another replica serves it now. */
  dispose(reason: "evicted" | "moved" = "evicted"): void {
    this.#moved = reason === "moved";
    this.#disposed = true;
    this.#notify();
    this.#listeners.clear();
  }

  addSubscriber(): void {
    this.subscribers += 1;
    this.idleSince = null;
  }

  removeSubscriber(now: number): void {
    this.subscribers = Math.max(0, this.subscribers - 1);
    if (this.subscribers === 0) this.idleSince = now;
  }

  toDocument(): SessionDocument {
    const teloOf = (name: string) => this.#launch.apps.find((app) => app.name === name)?.telo;
    return {
      sessionId: this.id,
      status: this.status,
      mode: this.mode,
      ...(this.agent && { agent: this.agent.name }),
      apps: [...this.apps.values()].map((app) => ({
        name: app.name,
        io: app.io,
        generation: app.run.generation,
        ports: app.ports,
        ...(teloOf(app.name) !== undefined && { telo: teloOf(app.name) }),
      })),
      createdAt: this.createdAt.toISOString(),
      ...(this.exitedAt && { exitedAt: this.exitedAt.toISOString() }),
      timeline: this.timeline,
    };
  }

  #notify(): void {
    for (const listener of [...this.#listeners]) listener();
  }
}
