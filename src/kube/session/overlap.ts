/**
 * Joining what a container printed before its terminal was attached (read from the pod log)
 * with what the attach delivered meanwhile: the log was read after the attach
 * opened, so its end may repeat the attach's first bytes. Nothing is lost, nothing shown twice.
 */

/** Longest overlap looked for: the log read is bounded, and the race it covers is short. */
const MAX_OVERLAP_BYTES = 64 * 1024;

/** How many leading bytes of `live` the end of `log` already holds. */
export function overlapLength(log: Uint8Array, live: Uint8Array): number {
  const longest = Math.min(log.byteLength, live.byteLength, MAX_OVERLAP_BYTES);
  for (let length = longest; length > 0; length -= 1) {
    if (Buffer.compare(log.subarray(log.byteLength - length), live.subarray(0, length)) === 0) return length;
  }
  return 0;
}

/**
 * The live bytes after a log shown first, when the attach may lag the log: under CPU pressure
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

  /** True when `live` occurs in the log somewhere other than at its very end. */
  #lagging(live: Buffer): boolean {
    for (let at = this.#log.indexOf(live); at !== -1; at = this.#log.indexOf(live, at + 1)) {
      if (at + live.byteLength < this.#log.byteLength) return true;
    }
    return false;
  }

  #finish(live: Buffer): Buffer {
    this.#done = true;
    this.#withheld = Buffer.alloc(0);
    return live.subarray(overlapLength(this.#log, live));
  }
}
