/**
 * The per-session reload budget (docs/api.md "Watch sessions"): a sliding 60 s window shared by workspace
 * writes and reloads. Only admitted requests are recorded, so a client hammering while
 * limited does not extend its own penalty.
 */
export const RELOAD_WINDOW_MS = 60_000;

export class ReloadBudget {
  #admitted: number[] = [];

  constructor(readonly limit: number) {}

  tryAdmit(now: number): boolean {
    this.#admitted = this.#admitted.filter((at) => now - at < RELOAD_WINDOW_MS);
    if (this.#admitted.length >= this.limit) return false;
    this.#admitted.push(now);
    return true;
  }
}
