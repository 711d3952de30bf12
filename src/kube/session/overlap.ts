/**
 * Joining what a container printed before its terminal was attached (read from the pod log)
 * with what the attach delivered: nothing lost, nothing shown twice. The runtime starts
 * delivering to an attach a moment after the attach is open, so the attach's first bytes may
 * come after lines it never delivered, and the log, read later, may hold them as well as some
 * of the attach's first bytes, or (written a moment behind) not yet all of either. Pure.
 */
import { unifyLineEnds } from "./line-ends.ts";

/** Longest overlap looked for: the log read is bounded, and the race it covers is short. */
const MAX_OVERLAP_BYTES = 64 * 1024;
/** The attach's first bytes looked for in the log: enough to tell one place from another. */
const MATCH_BYTES = 4 * 1024;

/**
 * Where in `log` the attach's output `live` begins: the offset from which the log holds live's
 * first bytes, up to its own end or up to MATCH_BYTES of them. Undefined when live's first byte
 * is nowhere such (a log read before the runtime wrote those bytes to it). Where several places
 * qualify (repetitive output), the one matching most bytes wins, the latest of equals: a line
 * shown twice is the lesser harm than a line lost, and the place a partial match at the log's
 * end stands for is the latest.
 */
export function liveStart(log: Uint8Array, live: Uint8Array): number | undefined {
  if (live.byteLength === 0) return undefined;
  // Line ends unified (line-ends.ts): a CR LF line is CR CR LF on the attach and CR LF in containerd's log.
  const unified = unifyLineEnds(log);
  const text = unified.bytes;
  const liveText = unifyLineEnds(live).bytes;
  if (liveText.byteLength === 0) return undefined;
  const probe = liveText.subarray(0, MATCH_BYTES);
  let best: { at: number; length: number } | undefined;
  const from = Math.max(0, text.byteLength - MAX_OVERLAP_BYTES - probe.byteLength);
  for (let at = text.indexOf(probe[0]!, from); at !== -1; at = text.indexOf(probe[0]!, at + 1)) {
    const length = Math.min(text.byteLength - at, probe.byteLength);
    if (text.compare(probe, 0, length, at, at + length) === 0 && (!best || length >= best.length)) best = { at, length };
  }
  return best && unified.origin(best.at);
}

/** How many leading bytes of `live` the end of `log` already holds (line ends unified). */
export function overlapLength(log: Uint8Array, live: Uint8Array): number {
  const logText = unifyLineEnds(log).bytes;
  const unified = unifyLineEnds(live);
  const liveText = unified.bytes;
  const longest = Math.min(logText.byteLength, liveText.byteLength, MAX_OVERLAP_BYTES);
  for (let length = longest; length > 0; length -= 1) {
    if (Buffer.compare(logText.subarray(logText.byteLength - length), liveText.subarray(0, length)) === 0) return unified.origin(length);
  }
  return 0;
}

/**
 * The live bytes after a log shown first, for output the attach delivers after the log was
 * read (the first attach read the log with none delivered yet), when the attach may lag the log: under CPU pressure
 * the log read can come back holding output the attach has not delivered yet, so the attach's
 * first bytes may lie wholly inside the log, not only overlap its end. While what the attach
 * delivered so far occurs in the log short of its end, it is withheld (it was shown); once it
 * reaches past the log's end, only what lies past is let through. Withholding stops after
 * MAX_OVERLAP_BYTES or when `giveUp` is called (a timer: output that merely repeats an earlier
 * line must not wait long), and what was withheld is then let through past its overlap.
 */
export class LiveAfterLog {
  readonly #log: Buffer;
  #withheld = Buffer.alloc(0);
  #done = false;

  constructor(log: Uint8Array) {
    const bytes = Buffer.from(log);
    this.#log = bytes.subarray(Math.max(0, bytes.byteLength - MAX_OVERLAP_BYTES));
    this.#done = this.#log.byteLength === 0;
  }

  get done(): boolean {
    return this.#done;
  }

  /** The part of `bytes` to show now (empty while withheld). */
  add(bytes: Uint8Array): Buffer {
    if (this.#done) return Buffer.from(bytes);
    const live = Buffer.concat([this.#withheld, bytes]);
    if (live.byteLength < MAX_OVERLAP_BYTES && this.#lagging(live)) {
      this.#withheld = live;
      return Buffer.alloc(0);
    }
    return this.#finish(live);
  }

  /** Stops withholding: what was withheld, past its overlap with the log's end. */
  giveUp(): Buffer {
    return this.#done ? Buffer.alloc(0) : this.#finish(this.#withheld);
  }

  /** True when `live` occurs in the log somewhere other than at its very end (line ends unified). */
  #lagging(bytes: Buffer): boolean {
    const log = unifyLineEnds(this.#log).bytes;
    const live = unifyLineEnds(bytes).bytes;
    if (live.byteLength === 0) return false;
    for (let at = log.indexOf(live); at !== -1; at = log.indexOf(live, at + 1)) {
      if (at + live.byteLength < log.byteLength) return true;
    }
    return false;
  }

  #finish(live: Buffer): Buffer {
    this.#done = true;
    this.#withheld = Buffer.alloc(0);
    return live.subarray(overlapLength(this.#log, live));
  }
}
