/**
 * Runs the supervisor around a backend: the session service, the internal socket, the watch
 * supervisor. The process entry (main.ts) and the tests' entries share it.
 */
import type { CoreConfig } from "../config/core.ts";
import type { Logger } from "../log.ts";
import { observeSessions } from "../metrics/figures.ts";
import { startProcessMetrics } from "../metrics/registry.ts";
import type { Backend } from "../sessions/backend.ts";
import { RUNNER_VERSION } from "../version.ts";
import { startInternalServer } from "./internal-server.ts";
import { DEFAULT_TIMINGS, SessionService, type SupervisorTimings } from "./session-service.ts";

export type RunningSupervisor = {
  service: SessionService;
  /** Stops every session and closes the socket. */
  shutdown(): Promise<void>;
};

export async function runSupervisor(options: {
  config: CoreConfig;
  backend: Backend;
  log: Logger;
  timings?: SupervisorTimings;
}): Promise<RunningSupervisor> {
  startProcessMetrics("supervisor");
  const service = new SessionService(options.config, options.backend, options.log, options.timings ?? DEFAULT_TIMINGS);
  observeSessions(() => service.registry.all());
  // Housekeeping before serving: what an earlier supervisor left is re-adopted or reaped.
  const adopted = await service.adoptSessions();
  if (adopted > 0) options.log.info("re-adopted sessions", { count: adopted });
  const internal = await startInternalServer({
    socketPath: options.config.internalSocketPath,
    service,
    log: options.log,
  });
  service.startWatchSupervisor();
  options.log.info("supervisor listening", { socket: options.config.internalSocketPath, version: RUNNER_VERSION });
  return {
    service,
    async shutdown() {
      await service.shutdown();
      await internal.close();
    },
  };
}

/** Ends the process cleanly on SIGTERM/SIGINT: every session is stopped first. */
export function stopOnSignals(supervisor: RunningSupervisor, log: Logger, afterShutdown: () => Promise<void> = async () => undefined): void {
  let stopping = false;
  const stop = (signal: string) => {
    if (stopping) return;
    stopping = true;
    log.info("supervisor shutting down", { signal });
    supervisor.shutdown().then(afterShutdown).then(
      () => process.exit(0),
      (error: unknown) => {
        log.error("shutdown failed", { error });
        process.exit(1);
      },
    );
  };
  process.once("SIGTERM", () => stop("SIGTERM"));
  process.once("SIGINT", () => stop("SIGINT"));
}
