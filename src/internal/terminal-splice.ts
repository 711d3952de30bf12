/**
 * The api side of a terminal on the runner's own server (docs/relay.md "The terminal"): the
 * client's upgraded socket spliced to a connection of its own to the supervisor, which speaks
 * the WebSocket itself. The api parses no message: the client's bytes are piped to the
 * supervisor as they come, and the supervisor's are passed on whole frames at a time, their
 * headers read (ws-wire.ts `scanFrames`) so that a close frame the api adds (the supervisor
 * gone: 1011; the api shutting down: 1012) starts where a frame ends. A frame still under way
 * is held until it is whole: a client never receives part of one. Backpressure is TCP's end
 * to end: the supervisor's connection is not read while the client's socket has not drained,
 * so the supervisor's follower meets its 1 MiB ceiling and waits.
 *
 * When no supervisor takes the terminal (none reachable, the session moving too long, the
 * origin refused) the api completes the handshake itself and closes with the code, because a
 * browser cannot read the status of a failed upgrade.
 */
import type { Duplex } from "node:stream";
import { isSessionMoving } from "../contract/problem.ts";
import type { Keepalive } from "./keepalive.ts";
import type { UpgradedTerminal } from "./terminal-upgrade.ts";
import { FRAME_BOUNDARY, type FrameScan, closeFrame, handshakeAnswer, scanFrames } from "./ws-wire.ts";

/** Closed by the runner when the supervisor went away: clients reconnect (not a final code). */
export const SUPERVISOR_GONE = { code: 1011, reason: "supervisor unavailable" };
/** Closed when the session stayed between runner replicas longer than the api waits: clients reconnect. */
export const SESSION_MOVING = { code: 1012, reason: "session moving between runner replicas; reconnect" };
export type CloseCode = { code: number; reason: string };

/** The supervisor's frames are at most a 64 KiB output chunk and its header; more held is not our supervisor. */
const MAX_HELD_BYTES = 1024 * 1024;
/** How long a client has to answer the api's own close frame before its socket is cut. */
const CLOSE_GRACE_MS = 1_000;

/** A client's socket: ended with a close frame, read until the client answers (its close frame must not be met with a reset), then cut. */
function closeClient(client: Duplex, close: CloseCode | undefined, graceMs = CLOSE_GRACE_MS): void {
  if (client.destroyed) return;
  client.on("data", discard);
  client.resume();
  if (close) client.end(closeFrame(close.code, close.reason));
  else client.end();
  const timer = setTimeout(() => client.destroy(), graceMs);
  timer.unref();
  client.once("close", () => clearTimeout(timer));
}

/** Reads and drops: what a client sends after the api closed its terminal. */
function discard(): void {}

/**
 * The live terminals of one api process, so its shutdown can close each with a code; and the
 * silence of the peer ones. Over TCP a supervisor that vanished without closing (its host gone,
 * a partition) would leave a terminal open for as long as the kernel retries: the supervisor
 * pings each peer terminal every keepalive interval, and one not heard from within the interval
 * and the timeout is taken for gone (1011), as the link's HTTP/2 PING does (docs/relay.md).
 * One timer for all of them, running only while there are any.
 */
export class Splices {
  readonly #live = new Set<Splice>();
  readonly #watched = new Set<Splice>();
  #watch: NodeJS.Timeout | undefined;

  #watchSilence(splice: Splice, keepalive: Keepalive): void {
    this.#watched.add(splice);
    this.#watch ??= setInterval(() => {
      const now = performance.now();
      for (const each of this.#watched) if (each.silentSince(now, keepalive)) each.close(SUPERVISOR_GONE);
    }, keepalive.intervalMs / 2);
    this.#watch.unref();
  }

  #forget(splice: Splice): void {
    this.#live.delete(splice);
    this.#watched.delete(splice);
    if (this.#watched.size === 0 && this.#watch) {
      clearInterval(this.#watch);
      this.#watch = undefined;
    }
  }

  /** Closes every terminal with `close`; resolves once each client has gone, or after the grace. */
  async closeAll(close: CloseCode, graceMs: number): Promise<void> {
    const gone = [...this.#live].map((splice) => splice.close(close, graceMs));
    await Promise.race([Promise.all(gone), new Promise((resolve) => setTimeout(resolve, graceMs))]);
  }

  /** Completes the handshake of `client` and closes it with `close` at once (the origin refused). */
  refuse(client: Duplex, key: string, close: CloseCode): void {
    const splice = new Splice(client, key, () => this.#forget(splice));
    this.#live.add(splice);
    void splice.close(close);
  }

  /** Splices `client` (its upgrade request already read, `head` what followed it) to what `open` gives. */
  splice(client: Duplex, key: string, head: Buffer, open: (clientGone: AbortSignal) => Promise<UpgradedTerminal>): void {
    const splice = new Splice(client, key, () => this.#forget(splice));
    this.#live.add(splice);
    splice.start(head, open, (keepalive) => this.#watchSilence(splice, keepalive));
  }
}

class Splice {
  #supervisor: Duplex | undefined;
  /** Set once the api closes the terminal itself, or the connection is over. */
  #done = false;
  #scan: FrameScan = FRAME_BOUNDARY;
  /** The supervisor's bytes of a frame still under way. */
  #held: Buffer[] = [];
  #heldBytes = 0;
  /** When the supervisor was last heard from (performance.now()). */
  #heardAt = 0;
  readonly #gone = new AbortController();
  readonly #closed: Promise<void>;

  constructor(
    readonly client: Duplex,
    readonly key: string,
    forget: () => void,
  ) {
    this.#closed = new Promise((resolve) =>
      client.once("close", () => {
        forget();
        this.#gone.abort();
        this.#supervisor?.destroy();
        resolve();
      }),
    );
  }

  start(head: Buffer, open: (clientGone: AbortSignal) => Promise<UpgradedTerminal>, watchSilence: (keepalive: Keepalive) => void): void {
    // Until the supervisor's connection is open the client is not read: its bytes wait in TCP.
    this.client.pause();
    open(this.#gone.signal).then(
      (upgraded) => {
        this.#join(upgraded, head);
        if (upgraded.keepalive && this.#supervisor) watchSilence(upgraded.keepalive);
      },
      (error: unknown) => this.close(isSessionMoving(error) ? SESSION_MOVING : SUPERVISOR_GONE),
    );
  }

  /** Whether the supervisor, which pings every interval, has said nothing for longer than the interval and the timeout. */
  silentSince(now: number, { intervalMs, timeoutMs }: Keepalive): boolean {
    return !this.#done && now - this.#heardAt > intervalMs + timeoutMs;
  }

  /** Closes with `close` at a frame boundary (the client has only whole frames); completes the handshake first when no supervisor did. */
  close(close: CloseCode, graceMs = CLOSE_GRACE_MS): Promise<void> {
    if (this.#done || this.client.destroyed) return this.#closed;
    this.#done = true;
    const supervisor = this.#supervisor;
    if (!supervisor) this.client.write(handshakeAnswer(this.key));
    else {
      supervisor.destroy();
      this.client.unpipe(supervisor);
    }
    this.#held = [];
    // A close frame the supervisor already sent is the conversation's last: nothing follows it.
    closeClient(this.client, this.#scan.closed ? undefined : close, graceMs);
    return this.#closed;
  }

  #join(upgraded: UpgradedTerminal, head: Buffer): void {
    const { socket: supervisor } = upgraded;
    if (this.#done || this.client.destroyed) {
      supervisor.destroy();
      return;
    }
    this.#supervisor = supervisor;
    this.#heardAt = performance.now();
    this.client.write(upgraded.head);
    if (head.byteLength > 0) supervisor.write(head);
    if (upgraded.rest.byteLength > 0) this.#fromSupervisor(upgraded.rest);
    supervisor.on("data", (chunk: Buffer) => this.#fromSupervisor(chunk));
    // The supervisor ended its side after its close frame: the conversation is over. Ending
    // (or breaking) without one: it went away, and the client is told to come back.
    supervisor.on("end", () => (this.#scan.closed ? this.#finish() : this.close(SUPERVISOR_GONE)));
    supervisor.on("close", () => this.close(SUPERVISOR_GONE));
    supervisor.on("error", () => this.close(SUPERVISOR_GONE));
    this.client.pipe(supervisor);
    this.client.resume();
    supervisor.resume();
  }

  /** Passes on the whole frames of `chunk` (and of what was held); holds the part of a frame still under way. */
  #fromSupervisor(chunk: Buffer): void {
    if (this.#done) return;
    this.#heardAt = performance.now();
    const { scan, boundary } = scanFrames(this.#scan, chunk);
    this.#scan = scan;
    if (boundary < 0) {
      this.#held.push(chunk);
      this.#heldBytes += chunk.byteLength;
      if (this.#heldBytes > MAX_HELD_BYTES) this.close(SUPERVISOR_GONE);
      return;
    }
    const client = this.client;
    client.cork();
    for (const part of this.#held) client.write(part);
    client.write(boundary === chunk.byteLength ? chunk : chunk.subarray(0, boundary));
    client.uncork();
    this.#held = boundary === chunk.byteLength ? [] : [chunk.subarray(boundary)];
    this.#heldBytes = chunk.byteLength - boundary;
    if (client.writableNeedDrain && this.#supervisor && !this.#supervisor.isPaused()) {
      const supervisor = this.#supervisor;
      supervisor.pause();
      client.once("drain", () => supervisor.resume());
    }
  }

  /** The supervisor closed the conversation: the client's socket is ended after what it was sent. */
  #finish(): void {
    if (this.#done) return;
    this.#done = true;
    closeClient(this.client, undefined);
  }
}
