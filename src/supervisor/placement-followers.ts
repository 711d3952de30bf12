/**
 * The placement told to the api as it changes (docs/relay.md "The placement"): the api asks with
 * the version it knows and is answered as soon as the placement is at another one, else held
 * until it changes; a hold ends after a while with the same answer, so a link that died silently
 * is found. One replica's placement never changes: its api asks once and learns it runs alone.
 */
import type { PlacementAnswer } from "../contract/responses.ts";
import type { SessionOwnership } from "../sessions/ownership-seam.ts";

/** Under the internal link's answer timeout (60 s), so a held ask is never taken for a dead supervisor. */
const HOLD_MS = 25_000;

const versionOf = (placement: PlacementAnswer) => (placement.shared ? String(placement.version) : "alone");

export class PlacementFollowers {
  readonly #ownership: SessionOwnership;
  readonly #waiting = new Set<() => void>();
  readonly #unsubscribe: () => void;

  constructor(ownership: SessionOwnership) {
    this.#ownership = ownership;
    this.#unsubscribe = ownership.onPlacementChange(() => this.#wakeAll());
  }

  /** The placement now if `knownVersion` is not its version, else the next one (or the same after HOLD_MS). */
  next(knownVersion: string | undefined): Promise<PlacementAnswer> {
    const current = this.#ownership.placement();
    if (knownVersion === undefined || knownVersion !== versionOf(current) || !current.shared) return Promise.resolve(current);
    return new Promise((resolve) => {
      const answer = () => {
        clearTimeout(timer);
        this.#waiting.delete(answer);
        resolve(this.#ownership.placement());
      };
      const timer = setTimeout(answer, HOLD_MS);
      this.#waiting.add(answer);
    });
  }

  /** Every held ask answered now (the supervisor is shutting down); no more holds are made meaningful after. */
  close(): void {
    this.#unsubscribe();
    this.#wakeAll();
  }

  #wakeAll(): void {
    for (const answer of [...this.#waiting]) answer();
  }
}
