/**
 * The bound on graceful shutdown (docs/operating.md "Readiness and shutdown"): whatever a step waits on, the process is
 * gone this long after SIGTERM. The api's bound covers its supervisor child's under `npm start`.
 */
import type { Logger } from "../log.ts";

export const SUPERVISOR_SHUTDOWN_BOUND_MS = 10_000;
export const API_SHUTDOWN_BOUND_MS = 15_000;

/** Arms the bound: exit 1 with a log line if the process is still here after `ms`. */
export function exitWithin(ms: number, log: Logger): void {
  setTimeout(() => {
    log.error("shutdown did not finish in time; exiting", { boundMs: ms });
    process.exit(1);
  }, ms).unref();
}
