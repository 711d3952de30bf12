/** Counts bytes arriving on a terminal and lets a caller wait until a total is reached. */
export class ByteCounter {
  total = 0;
  frames = 0;
  #waiters: { at: number; resolve: () => void }[] = [];

  add(bytes: number): void {
    this.total += bytes;
    this.frames += 1;
    if (this.#waiters.length === 0) return;
    const due = this.#waiters.filter((w) => w.at <= this.total);
    this.#waiters = this.#waiters.filter((w) => w.at > this.total);
    for (const w of due) w.resolve();
  }

  /** Resolves once `at` bytes have arrived in total; rejects after `timeoutMs`. */
  until(at: number, timeoutMs = 10_000): Promise<void> {
    if (this.total >= at) return Promise.resolve();
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`terminal stalled at ${this.total} of ${at} bytes`)), timeoutMs);
      this.#waiters.push({
        at,
        resolve: () => {
          clearTimeout(timer);
          resolve();
        },
      });
    });
  }
}
