/**
 * A user at a terminal while the runner's replicas come and go: the session's terminal kept
 * open, a numbered line typed every few hundred milliseconds, and after every close (1012 at a
 * handover, a dropped socket at a kill, a refusal while the session is between owners) a new
 * socket opened with the last seq seen, as the contract tells a client to. What came back is
 * then held against the session pod's own output (its container log): a typed line the pod
 * printed reaches the client at most as often as the pod printed it, and fewer times only where
 * the client was told of a `gap`.
 */
import { setTimeout as sleep } from "node:timers/promises";
import type { RunnerClient, Terminal, TerminalFrame } from "../../../src/client/index.ts";

const TYPE_EVERY_MS = 300;
const REOPEN_AFTER_MS = 100;
const ECHO_SETTLE_MS = 1_500;

/** `<marker>:<n>;`, so that no number's text is inside another's. */
const line = (marker: string, n: number) => `${marker}:${n};`;

export class LiveTerminal {
  readonly frames: TerminalFrame[] = [];
  /** Close codes of every socket, in order. */
  readonly closeCodes: number[] = [];
  /** For every reopening: milliseconds from the close to the first output on the new socket. */
  readonly reconnectMs: number[] = [];
  /** When each output frame arrived (Date.now()). */
  readonly outputAt: number[] = [];
  #typed = 0;
  #stopped = false;
  #current: Terminal | undefined;
  readonly #done: Promise<void>;

  constructor(
    private readonly client: RunnerClient,
    readonly sessionId: string,
    private readonly marker: string,
  ) {
    this.#done = this.#keepOpen();
  }

  get typed(): number {
    return this.#typed;
  }

  async #keepOpen(): Promise<void> {
    let lastSeq: number | undefined;
    let closedAt: number | undefined;
    while (!this.#stopped) {
      const terminal = this.client.terminal(this.sessionId, lastSeq === undefined ? {} : { lastSeq });
      if (!(await terminal.opened.then(() => true, () => false))) {
        await sleep(REOPEN_AFTER_MS * 2);
        continue;
      }
      this.#current = terminal;
      if (this.#stopped) terminal.close();
      const typing = setInterval(() => {
        if (!this.#stopped) void terminal.send(`${line(this.marker, this.#typed++)}\r`).catch(() => undefined);
      }, TYPE_EVERY_MS);
      let first = true;
      for await (const frame of terminal.frames()) {
        this.frames.push(frame);
        if (frame.kind !== "bytes") continue;
        lastSeq = frame.seq;
        this.outputAt.push(Date.now());
        if (first && closedAt !== undefined) this.reconnectMs.push(Date.now() - closedAt);
        first = false;
      }
      clearInterval(typing);
      this.closeCodes.push((await terminal.closed).code);
      closedAt = Date.now();
      if (!this.#stopped) await sleep(REOPEN_AFTER_MS);
    }
  }

  /** Stops typing, lets the last lines' echoes arrive, then closes. */
  async stop(): Promise<void> {
    this.#stopped = true;
    await sleep(ECHO_SETTLE_MS);
    this.#current?.close();
    await this.#done;
  }

  /** The longest time without output from `since` on: what a user waited through. */
  longestSilenceMs(since: number): number {
    const times = [since, ...this.outputAt.filter((at) => at > since)];
    return Math.max(0, ...times.slice(1).map((at, i) => at - times[i]!));
  }

  /** Everything the client was sent, as text. */
  text(): string {
    return this.frames.map((frame) => (frame.kind === "bytes" ? Buffer.from(frame.payload).toString() : "")).join("");
  }

  gaps(): number {
    return this.frames.filter((frame) => frame.kind === "control" && frame.message.type === "gap").length;
  }

  seqs(): number[] {
    return this.frames.flatMap((frame) => (frame.kind === "bytes" ? [frame.seq] : []));
  }

  /**
   * Every typed line, counted in what the pod printed and in what the client got: lines the
   * client got more often than the pod printed them (never allowed), and lines it got less often.
   */
  countAgainst(podOutput: string): { duplicated: number[]; missing: number[] } {
    const text = this.text();
    const count = (haystack: string, needle: string) => haystack.split(needle).length - 1;
    const duplicated: number[] = [];
    const missing: number[] = [];
    for (let n = 0; n < this.#typed; n++) {
      const printed = count(podOutput, line(this.marker, n));
      const received = count(text, line(this.marker, n));
      if (received > printed) duplicated.push(n);
      if (received < printed) missing.push(n);
    }
    return { duplicated, missing };
  }
}
