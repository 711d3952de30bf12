/**
 * One container's terminal (docs/kubernetes.md "The engine", "Watch pods") for run and watch sessions alike: the
 * attach (its output joined per socket read, output-joiner.ts), what was printed before it
 * (from the pod log), the terminal size sent on every attach, keystrokes typed
 * before it, and the re-attach of a stream cut while the container still runs — never of a
 * container that has ended — retried while the control plane restarts (an apiserver that
 * comes back refuses attaches until it has synced), and given up, said once, when every attach
 * is refused or closes as soon as it opens (attach-retry.ts).
 */
import type { ByteStreamTag } from "../../contract/wire.ts";
import { withDeadline } from "../cluster/api.ts";
import type { KubeContext } from "../context.ts";
import { type AttachEnd, type Attachment, attachContainer } from "../io/attach.ts";
import { apiReason } from "../status/api-error.ts";
import { type Reattach, attachRetryPause, closedAtOnceReason, reattachAfterClose } from "../retry/attach-retry.ts";
import { type LogLine, type LogPosition, asShownByTerminal, bytesAfter, parseStampedLog, positionAfter, positionTime, secondsBack, secondsSince } from "./log-position.ts";
import { OutputJoiner } from "./output-joiner.ts";
import { LiveAfterLog, liveStart } from "./overlap.ts";

/** Keystrokes typed between `running` and the attach are kept, up to this many bytes. */
const MAX_EARLY_STDIN_BYTES = 64 * 1024;
/** Keystrokes typed while an open attach's log join goes on (a second or so): a few pastes' worth. */
const MAX_JOINING_STDIN_BYTES = 4 * 1024 * 1024;
/** What a terminal gets until the client says otherwise (the classic VT100 size). */
export const DEFAULT_TERMINAL_SIZE = { cols: 80, rows: 24 };
/** Output read from the pod log when the attach came late or never. */
const LOG_BYTES = 1024 * 1024;
const LOG_READ_DEADLINE_MS = 10_000;
/** The last bytes shown, looked for in the log at a handover: long enough to occur once in most output. */
const TAIL_BYTES = 8 * 1024;
/** A handover's read of the log back to where its shown tail began, a few seconds' output at most. */
const POSITION_READ_BYTES = 4 * 1024 * 1024;
/** How long live output that repeats the log's lines is withheld at most, waiting for the attach to catch up. */
const JOIN_WAIT_MS = 1_000;
/** How long the first attach waits for live output to place in the log before reading the log without any. */
const QUIET_MS = 300;
/**
 * Log reads for the first attach's live output to be found in (the runtime writes the log a
 * moment behind), the pause between, and the time after which no read is made again (a slow
 * apiserver must not hold the terminal's keystrokes for several read deadlines).
 */
const LOG_READS = 4;
const LOG_REREAD_MS = 100;
const LOG_REREAD_WITHIN_MS = 1_000;
/** Clocks of the runner and the node may differ by this much. */
const CLOCK_MARGIN_SECONDS = 5;

/**
 * What a terminal shows from before its first attach (docs/replicas.md "Output across a
 * handover"): the whole log (a new session, or one whose last owner showed nothing), the log
 * after a position (a session handed over), or nothing (a session taken over from a replica
 * that died: what it showed last is not known, and the client is told of a gap instead).
 */
export type TerminalStart = { from: "beginning" } | { from: "position"; position: LogPosition } | { from: "now" };

export type TerminalTarget = {
  podName: string;
  container: string;
  tty: boolean;
  onOutput(bytes: Uint8Array, tag: ByteStreamTag): void;
  /** A `[runner]` line on this terminal. */
  say(text: string): void;
  /** Default: the beginning. */
  start?: TerminalStart;
};

export class ContainerTerminal {
  readonly #ctx: KubeContext;
  readonly #target: TerminalTarget;
  #attachment: Attachment | undefined;
  #closed = false;
  #size = DEFAULT_TERMINAL_SIZE;
  #earlyStdin: Buffer[] = [];
  #earlyStdinBytes = 0;
  /** The first attach is open and its log join goes on: keystrokes wait, with more room. */
  #joiningLog = false;
  /** The bytes shown last (about TAIL_BYTES), each chunk with the earliest time it can have been printed (undefined: the container's start). */
  #tail: { bytes: Buffer; printedSince: number | undefined }[] = [];
  #tailBytes = 0;
  /** Output reached the client (from the attach or the log). */
  sawOutput = false;
  /**
   * The pod log, read and shown at most once: by the first attach's join or by the end's
   * backfill, whichever asks first; the other waits for the same read rather than showing the
   * log again (an app can end while the first attach is still reading it).
   */
  #shownLog: Promise<Buffer> | undefined;

  constructor(ctx: KubeContext, target: TerminalTarget) {
    this.#ctx = ctx;
    this.#target = target;
  }

  /** The first attach: what the container printed before it is read from the log, then followed live. */
  async open(): Promise<void> {
    await this.#attach(true);
  }

  writeStdin(bytes: Uint8Array): void {
    if (this.#attachment) return this.#attachment.writeStdin(bytes);
    // What fits is kept: the supervisor joins a read's keystrokes into one write.
    const room = (this.#joiningLog ? MAX_JOINING_STDIN_BYTES : MAX_EARLY_STDIN_BYTES) - this.#earlyStdinBytes;
    const kept = bytes.subarray(0, Math.max(0, room));
    if (this.#closed || kept.byteLength === 0) return;
    this.#earlyStdin.push(Buffer.from(kept));
    this.#earlyStdinBytes += kept.byteLength;
  }

  resize(cols: number, rows: number): void {
    this.#size = { cols, rows };
    this.#attachment?.resize(cols, rows);
  }

  close(): void {
    this.#closed = true;
    this.#attachment?.close();
    this.#attachment = undefined;
  }

  /** The container's log, for a terminal that never showed anything (an app that ended before its attach). */
  async backfill(): Promise<void> {
    if (this.#shownLog) await this.#shownLog;
    else if (!this.sawOutput) await this.#showLog();
  }

  #showLog(): Promise<Buffer> {
    return (this.#shownLog ??= this.#readLog().then((log) => {
      this.#emitFromLog(log);
      return log;
    }));
  }

  #emit(bytes: Uint8Array, stream: "stdout" | "stderr" = "stdout", printedSince: number | undefined = Date.now()): void {
    if (bytes.byteLength === 0) return;
    this.sawOutput = true;
    this.#remember(Buffer.from(bytes), printedSince);
    this.#target.onOutput(bytes, this.#target.tty ? "tty" : stream);
  }

  /** Output read back from the log: printed since where the read began, maybe long before it is shown (a successor's first output). */
  #emitFromLog(bytes: Uint8Array): void {
    const start = this.#target.start;
    this.#emit(bytes, "stdout", start?.from === "position" ? positionTime(start.position) : undefined);
  }

  /** What this terminal shows from before its attach, by its start. */
  async #readLog(): Promise<Buffer> {
    const start = this.#target.start ?? { from: "beginning" };
    if (start.from === "now") return Buffer.alloc(0);
    if (start.from === "beginning") {
      const log = await this.#fetchLog({ limitBytes: LOG_BYTES });
      return this.#target.tty ? asShownByTerminal(log) : log;
    }
    const since = secondsSince(start.position, Date.now(), CLOCK_MARGIN_SECONDS);
    const log = await this.#fetchLog({ limitBytes: LOG_BYTES, timestamps: true, sinceSeconds: since });
    return bytesAfter(this.#shownLines(log), start.position);
  }

  /** A log read with timestamps, its lines as this terminal shows them (positions are counted in these). */
  #shownLines(log: Buffer): LogLine[] {
    const lines = parseStampedLog(log);
    return this.#target.tty ? lines.map((line) => ({ ...line, text: asShownByTerminal(line.text) })) : lines;
  }

  async #fetchLog(options: { limitBytes: number; timestamps?: boolean; sinceSeconds?: number }): Promise<Buffer> {
    try {
      const read = this.#ctx.api.core.readNamespacedPodLog({
        name: this.#target.podName,
        namespace: this.#ctx.config.sessionPods.namespace,
        container: this.#target.container,
        ...options,
      });
      // Live output waits for this read: a hung apiserver must not hold the terminal for long.
      const log = await withDeadline(read, LOG_READ_DEADLINE_MS, "the pod log read");
      return Buffer.from(log ?? "");
    } catch {
      // The log is a courtesy; the live stream and the status matter.
      return Buffer.alloc(0);
    }
  }

  #remember(bytes: Buffer, printedSince: number | undefined): void {
    this.#tail.push({ bytes, printedSince });
    this.#tailBytes += bytes.byteLength;
    while (this.#tail.length > 1 && this.#tailBytes - this.#tail[0]!.bytes.byteLength >= TAIL_BYTES) {
      this.#tailBytes -= this.#tail.shift()!.bytes.byteLength;
    }
  }

  /**
   * Closes the terminal and says where a successor's should start: just after the last bytes
   * this one showed, found in the log by their content (log-position.ts). Undefined when that
   * cannot be told: a `streams` terminal (the log does not say which stream a line came from),
   * or bytes that occur in the log not once.
   */
  async handOverStart(): Promise<TerminalStart | undefined> {
    this.close();
    if (!this.#target.tty) return undefined;
    const start = this.#target.start ?? { from: "beginning" };
    // Nothing shown since this terminal began: where it began still holds (unless that was "now").
    if (this.#tail.length === 0) return start.from === "now" ? undefined : start;
    const shown = Buffer.concat(this.#tail.map((chunk) => chunk.bytes));
    const delivered = shown.subarray(Math.max(0, shown.byteLength - TAIL_BYTES));
    // Read back from where the shown bytes can have begun; from the start if some were the log's first.
    const printedSince = this.#tail[0]!.printedSince;
    const since = printedSince === undefined ? {} : { sinceSeconds: secondsBack(printedSince, Date.now(), CLOCK_MARGIN_SECONDS) };
    const log = await this.#fetchLog({ limitBytes: POSITION_READ_BYTES, timestamps: true, ...since });
    const position = positionAfter(this.#shownLines(log), delivered);
    // The successor then starts past a gap: say why, since the client is told only that there is one.
    if (!position) this.#ctx.log.info("the terminal's last output was not found once in the pod log; its successor starts after a gap", { pod: this.#target.podName, container: this.#target.container });
    return position && { from: "position", position };
  }

  #containerRunning(): boolean {
    const pod = this.#ctx.watcher.get(this.#target.podName);
    const status = pod?.status?.containerStatuses?.find((candidate) => candidate.name === this.#target.container);
    return pod?.status?.phase === "Running" && status?.state?.running !== undefined;
  }

  /** `attempt` counts the tries of this attach since the last stream that stayed open (attach-retry.ts). */
  async #attach(first: boolean, attempt = 1): Promise<void> {
    if (this.#closed) return;
    // Until the log is joined, live output waits, so the two are shown without a loss or a repeat.
    const holding = first && this.#target.tty && this.#target.start?.from !== "now" ? new HeldOutput() : undefined;
    // After a log join, until the attach has caught up with the log (overlap.ts).
    let joining: LiveAfterLog | undefined;
    const live = new OutputJoiner((bytes, stream) => {
      const shown = joining ? joining.add(bytes) : bytes;
      if (joining?.done) joining = undefined;
      this.#emit(shown, stream);
    });
    let attachment: Attachment;
    try {
      attachment = await attachContainer(this.#ctx.api.kubeConfig, {
        namespace: this.#ctx.config.sessionPods.namespace,
        pod: this.#target.podName,
        container: this.#target.container,
        tty: this.#target.tty,
        onOutput: (bytes, stream) => (holding?.held ? holding.add(bytes) : live.add(bytes, stream)),
      }, this.#ctx.api.userAgent);
    } catch (error) {
      if (!this.#closed) this.#refused(error, first, attempt);
      return;
    }
    if (this.#closed) return attachment.close();
    // Timed from here, not from when it is used: a stream can close while the log is joined.
    const openedAt = Date.now();
    const ended = attachment.closed.then((end) => ({ end, openedAt, closedAt: Date.now(), attempt }));
    if (!holding) return this.#use(attachment, ended);
    // The join goes on while the session's start does (its debug stream must not wait for a
    // quiet app). Keystrokes wait until it is done: their echo must not reach the log before it
    // is read, or output that repeats itself (a paste's echo) could not be placed in it.
    this.#joiningLog = true;
    void this.#joinLog(holding).then((join) => {
      if (join) {
        joining = join;
        setTimeout(() => {
          if (joining !== join) return;
          joining = undefined;
          this.#emit(join.giveUp());
        }, JOIN_WAIT_MS).unref();
      }
      this.#use(attachment, ended);
    });
  }

  /** The attach takes the terminal's size and the keystrokes typed so far. */
  #use(attachment: Attachment, ended: Promise<StreamClose>): void {
    this.#joiningLog = false;
    if (this.#closed) return attachment.close();
    this.#attachment = attachment;
    attachment.resize(this.#size.cols, this.#size.rows);
    for (const bytes of this.#earlyStdin.splice(0)) attachment.writeStdin(bytes);
    this.#earlyStdinBytes = 0;
    void ended.then((close) => this.#onClosed(attachment, close));
  }

  /**
   * The first attach's join (overlap.ts): shows the log and what the attach held, and returns
   * the join later live output must still pass through, if any. The runtime delivers to an
   * attach a moment after it opens, so what was printed in between is only in the log: the log
   * is read once the attach has delivered something (or after a quiet moment), and shown up to
   * where the delivered bytes begin in it; a read that does not hold them yet is made again.
   */
  async #joinLog(holding: HeldOutput): Promise<LiveAfterLog | undefined> {
    if (this.#shownLog) return this.#showHeldAfter(await this.#shownLog, holding.release());
    let settle!: (log: Buffer) => void;
    this.#shownLog = new Promise((resolve) => (settle = resolve));
    await holding.firstOrQuiet(QUIET_MS);
    const firstRead = Date.now();
    for (let read = 1; ; read += 1) {
      const log = await this.#readLog();
      const delivered = holding.peek();
      const at = delivered.byteLength === 0 ? undefined : liveStart(log, delivered);
      const lastRead = read === LOG_READS || Date.now() - firstRead > LOG_REREAD_WITHIN_MS;
      if (at !== undefined || delivered.byteLength === 0 || lastRead) {
        const held = holding.release();
        settle(log);
        if (at === undefined) {
          this.#emitFromLog(log);
          return this.#showHeldAfter(log, held);
        }
        this.#emitFromLog(log.subarray(0, at));
        this.#emit(held);
        return undefined;
      }
      await new Promise((resolve) => setTimeout(resolve, LOG_REREAD_MS));
    }
  }

  /** Held output after a log already shown: past the log's end, the rest of the join returned. */
  #showHeldAfter(log: Buffer, held: Buffer): LiveAfterLog | undefined {
    const join = new LiveAfterLog(log);
    this.#emit(join.add(held));
    return join.done ? undefined : join;
  }

  /**
   * A refused attach is tried again while the container runs and the refusal may pass (a
   * control-plane restart: attach-retry.ts); a refusal because the container has just ended is
   * its end, not a failure to tell (the pod watch may lag the container by a moment, so the
   * container is looked at after the pause). Otherwise the terminal says why, once.
   */
  #refused(error: unknown, first: boolean, attempt: number): void {
    const pause = attachRetryPause(error, attempt, this.#ctx.timings.reattachDelayMs);
    this.#tryAgain(first, { attempt: attempt + 1, pauseMs: pause }, () => apiReason(error));
  }

  /**
   * A stream cut while the container still runs (network, apiserver restart) is re-attached; one
   * that closed as soon as it opened was a failed attempt (attach-retry.ts), retried as a refusal is.
   */
  #onClosed(attachment: Attachment, close: StreamClose): void {
    if (this.#closed || this.#attachment !== attachment) return;
    this.#attachment = undefined;
    const next = reattachAfterClose(close.end, close.openedAt, close.closedAt, close.attempt, this.#ctx.timings.reattachDelayMs);
    this.#tryAgain(false, next, () => {
      this.#ctx.log.warn("gave up re-attaching a terminal whose attach stream closes as soon as it opens", {
        pod: this.#target.podName,
        container: this.#target.container,
        end: close.end.status ?? close.end.error?.message,
      });
      return closedAtOnceReason(close.end);
    });
  }

  /** After the pause, the next attempt while the container runs; without one, why, said once. */
  #tryAgain(first: boolean, next: Reattach, reason: () => string): void {
    setTimeout(() => {
      if (this.#closed || !this.#containerRunning()) return;
      if (next.pauseMs !== undefined) return void this.#attach(first, next.attempt);
      const tried = next.attempt - 1;
      const gaveUp = tried > 1 ? `; gave up after ${tried} attempts` : "";
      this.#target.say(`failed to attach${this.#target.tty ? " PTY" : ""}: ${reason()}${gaveUp}`);
    }, next.pauseMs ?? this.#ctx.timings.reattachDelayMs).unref();
  }
}

/** An open attach stream's end, with the attempt it was and when it opened and closed. */
type StreamClose = { end: AttachEnd; openedAt: number; closedAt: number; attempt: number };

/** The first attach's output while its log is joined: held, and waited for. */
class HeldOutput {
  #chunks: Buffer[] = [];
  #arrived: (() => void) | undefined;
  held = true;

  add(bytes: Buffer): void {
    this.#chunks.push(bytes);
    this.#arrived?.();
  }

  /** Resolves once something is held, or after `quietMs`. */
  firstOrQuiet(quietMs: number): Promise<void> {
    if (this.#chunks.length > 0) return Promise.resolve();
    return new Promise((resolve) => {
      const timer = setTimeout(resolve, quietMs);
      this.#arrived = () => {
        clearTimeout(timer);
        this.#arrived = undefined;
        resolve();
      };
    });
  }

  peek(): Buffer {
    return Buffer.concat(this.#chunks);
  }

  /** What is held; from now on output goes on live. */
  release(): Buffer {
    this.held = false;
    const bytes = this.peek();
    this.#chunks = [];
    return bytes;
  }
}
