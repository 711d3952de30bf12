/**
 * Staged bundles (docs/kubernetes.md "Run pods"): each an archive behind a one-time, expiring URL that a
 * session pod's init container downloads from the runner's bundle listener. In memory only.
 */
import { randomBytes, timingSafeEqual } from "node:crypto";

const EXPIRY_MS = 5 * 60 * 1000;

type Staged = { token: Buffer; archive: Buffer; timer: NodeJS.Timeout };

export class BundleStore {
  readonly #staged = new Map<string, Staged>();

  constructor(
    readonly selfUrl: string,
    readonly expiryMs = EXPIRY_MS,
  ) {}

  /** Stages an archive under `id` (replacing an earlier one) and returns its one-time URL. */
  stage(id: string, archive: Buffer): string {
    this.drop(id);
    const token = randomBytes(24);
    const timer = setTimeout(() => this.drop(id), this.expiryMs);
    timer.unref();
    this.#staged.set(id, { token: Buffer.from(token.toString("hex")), archive, timer });
    return `${this.selfUrl}/internal/bundles/${encodeURIComponent(id)}?token=${token.toString("hex")}`;
  }

  /** The archive, once: a matching token takes it out of the store. */
  take(id: string, token: string | undefined): Buffer | undefined {
    const staged = this.#staged.get(id);
    if (!staged || token === undefined) return undefined;
    const offered = Buffer.from(token);
    // Constant-time comparison; a length mismatch is simply no match.
    if (offered.length !== staged.token.length || !timingSafeEqual(offered, staged.token)) return undefined;
    this.drop(id);
    return staged.archive;
  }

  /** Staged and not yet taken nor dropped: a warm pool claim's pod has not fetched it. */
  has(id: string): boolean {
    return this.#staged.has(id);
  }

  drop(id: string): void {
    const staged = this.#staged.get(id);
    if (!staged) return;
    clearTimeout(staged.timer);
    this.#staged.delete(id);
  }

  get size(): number {
    return this.#staged.size;
  }
}
