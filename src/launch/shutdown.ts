/**
 * The bound on graceful shutdown (docs/operating.md "Readiness and shutdown"): whatever a step waits on, the process is
 * gone this long after SIGTERM. The api's bound covers its supervisor child's under `npm start`.
 */
import type { Logger } from "../log.ts";

/**
 * A leaving replica's exit, step by step (docs/replicas.md "Duties and exit"), each bounded so that
 * the whole fits the supervisor's bound, which fits the pod's grace period after its `preStop`
 * sleep (test/unit/exit-budget.test.ts holds the sums and a handover with every step hung).
 */
export const EXIT_BUDGET = {
  /** The coordination period in flight when SIGTERM came (Lease calls). */
  periodMs: 1_000,
  /** Work under way on moved shards (a takeover, a planned move), finished before the exit's own hand-off. */
  settleMs: 3_000,
  /** Letting every session go: terminals closed, stream positions saved on the pods. */
  letGoMs: 3_000,
  /** Releasing the shard Leases and the duties, deleting the member Lease. */
  releaseMs: 1_000,
  /** Telling the other replicas, so they take the shards at once. */
  tellMs: 1_000,
  /** Closing the internal socket and the peer listener. */
  closeMs: 500,
} as const;

export const SUPERVISOR_SHUTDOWN_BOUND_MS = 10_000;
export const API_SHUTDOWN_BOUND_MS = 15_000;

/** `work`, or nothing once `ms` passed: a bounded step of an exit. */
export async function within(ms: number, work: Promise<unknown>): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  await Promise.race([work.then(() => undefined, () => undefined), new Promise<void>((resolve) => (timer = setTimeout(resolve, ms)))]).finally(() => clearTimeout(timer));
}

/** Arms the bound: exit 1 with a log line if the process is still here after `ms`. */
export function exitWithin(ms: number, log: Logger): void {
  setTimeout(() => {
    log.error("shutdown did not finish in time; exiting", { boundMs: ms });
    process.exit(1);
  }, ms).unref();
}
