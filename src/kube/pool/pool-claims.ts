/**
 * The warm pool's side of the bundle listener (docs/kubernetes.md "Warm pool"): each pool pod long-polls its own
 * route, `/internal/pool/<pod>?token=…`, with a 24-byte random token its spec carries, until the
 * runner hands it a claim. A claim is answered once, or, when its deliverer says so, again to
 * the next poll until the pod acknowledges it some other way (the warm pool: by fetching the
 * session's bundle), so that an answer lost on its way to the pod is not the session's end; the
 * token is then spent. In memory only; a restarted supervisor registers the pods it adopts again
 * from their specs.
 */
import { randomBytes, timingSafeEqual } from "node:crypto";

/** How long a poll is held before "not yet" (under the simulated wget's and busybox's budgets). */
const HOLD_MS = 25_000;

type Claim = {
  answer: Buffer;
  /** Whether a poll after the first still gets the answer: the pod has not acknowledged it yet. */
  unacknowledged: () => boolean;
  served: boolean;
};

type Waiting = {
  token: Buffer;
  /** The claim, once made, until the pod has collected it. */
  claim: Claim | undefined;
  /** Polls being held; each gets the claim (true) or "not yet". */
  polls: Set<(claimed: boolean) => void>;
  /** The pod has polled since this supervisor registered it: its shell is waiting. */
  polled: boolean;
};

export type PollAnswer = { kind: "claimed"; answer: Buffer } | { kind: "not-yet" } | { kind: "unknown" };

export class PoolClaims {
  readonly #pods = new Map<string, Waiting>();

  constructor(
    readonly selfUrl: string,
    readonly holdMs = HOLD_MS,
  ) {}

  /** A fresh token for a pod about to be created; returns the URL its shell polls. */
  register(pod: string): string {
    const url = `${this.#prefix(pod)}${randomBytes(24).toString("hex")}`;
    this.adopt(pod, url);
    return url;
  }

  /** Registers a pod an earlier supervisor created, from the URL its spec carries; false if the URL is not this listener's. */
  adopt(pod: string, url: string): boolean {
    const prefix = this.#prefix(pod);
    if (!url.startsWith(prefix)) return false;
    this.#pods.set(pod, { token: Buffer.from(url.slice(prefix.length)), claim: undefined, polls: new Set(), polled: false });
    return true;
  }

  /** Whether this supervisor holds the pod's token (it made or adopted the pod, and has not forgotten it). */
  known(pod: string): boolean {
    return this.#pods.has(pod);
  }

  /** Whether the pod's claim answer has been handed to this supervisor (and not yet forgotten). */
  answered(pod: string): boolean {
    return this.#pods.get(pod)?.claim !== undefined;
  }

  polled(pod: string): boolean {
    return this.#pods.get(pod)?.polled === true;
  }

  /**
   * Hands the pod its claim: to the polls held now (one, unless an earlier one's connection died
   * unnoticed), else to the next one; and to later polls too while `unacknowledged()` holds (a
   * pod polls again only when the answer did not reach it).
   */
  deliver(pod: string, answer: Buffer, unacknowledged: () => boolean = () => false): void {
    const waiting = this.#pods.get(pod);
    if (!waiting) return;
    waiting.claim = { answer, unacknowledged, served: false };
    // A poll answered meanwhile (a single answer spends the token and lets the others go) has left the set.
    for (const poll of [...waiting.polls]) if (waiting.polls.has(poll)) poll(true);
  }

  forget(pod: string): void {
    const waiting = this.#pods.get(pod);
    if (!waiting) return;
    this.#pods.delete(pod);
    for (const poll of waiting.polls) poll(false);
  }

  /** One poll: the claim at once or when it comes, "not yet" after the hold, "unknown" for a wrong pod or token. */
  poll(pod: string, token: string | undefined, signal: AbortSignal): Promise<PollAnswer> {
    const waiting = this.#pods.get(pod);
    if (!waiting || token === undefined) return Promise.resolve({ kind: "unknown" });
    const offered = Buffer.from(token);
    // Constant-time comparison; a length mismatch is simply no match.
    if (offered.length !== waiting.token.length || !timingSafeEqual(offered, waiting.token)) return Promise.resolve({ kind: "unknown" });
    waiting.polled = true;
    if (waiting.claim) return Promise.resolve(this.#collect(pod, waiting.claim));
    return new Promise((resolve) => {
      const settle = (claimed: boolean) => {
        clearTimeout(timer);
        waiting.polls.delete(settle);
        signal.removeEventListener("abort", abort);
        resolve(claimed && waiting.claim ? this.#collect(pod, waiting.claim) : { kind: "not-yet" });
      };
      const abort = () => settle(false);
      const timer = setTimeout(abort, this.holdMs);
      timer.unref();
      signal.addEventListener("abort", abort, { once: true });
      waiting.polls.add(settle);
    });
  }

  /** The answer goes out; the pod's token is spent with it, or once the pod has acknowledged it. */
  #collect(pod: string, claim: Claim): PollAnswer {
    if (claim.served && !claim.unacknowledged()) {
      this.forget(pod);
      return { kind: "unknown" };
    }
    claim.served = true;
    if (!claim.unacknowledged()) this.forget(pod);
    return { kind: "claimed", answer: claim.answer };
  }

  #prefix(pod: string): string {
    return `${this.selfUrl}/internal/pool/${encodeURIComponent(pod)}?token=`;
  }
}
