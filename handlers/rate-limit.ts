/**
 * A sliding-window limit per client key (session creations per client address). Pure: the
 * caller passes the time. Memory is bounded by `limit` timestamps per key, and keys whose
 * window has passed are forgotten as new keys arrive.
 */
export type RateDecision = { allowed: true } | { allowed: false; retryAfterSeconds: number };

const SWEEP_EVERY = 1024;

export class SlidingWindowLimit {
  readonly #recent = new Map<string, number[]>();
  #sinceSweep = 0;

  constructor(
    readonly limit: number,
    readonly windowMs: number,
  ) {}

  take(key: string, now: number): RateDecision {
    this.#sweep(now);
    const times = (this.#recent.get(key) ?? []).filter((time) => time > now - this.windowMs);
    if (times.length >= this.limit) {
      this.#recent.set(key, times);
      return { allowed: false, retryAfterSeconds: Math.max(1, Math.ceil((times[0]! + this.windowMs - now) / 1000)) };
    }
    times.push(now);
    this.#recent.set(key, times);
    return { allowed: true };
  }

  get keys(): number {
    return this.#recent.size;
  }

  #sweep(now: number): void {
    this.#sinceSweep += 1;
    if (this.#sinceSweep < SWEEP_EVERY) return;
    this.#sinceSweep = 0;
    for (const [key, times] of this.#recent) if (times.at(-1)! <= now - this.windowMs) this.#recent.delete(key);
  }
}
