/**
 * Runs the supervisor around a backend: the session service, the internal socket, the watch
 * supervisor. The process entry (main.ts) and the tests' entries share it.
 */
import type { CoreConfig } from "../config/core.ts";
import { onStopRequest } from "../launch/parent.ts";
import { EXIT_BUDGET, SUPERVISOR_SHUTDOWN_BOUND_MS, exitWithin, within } from "../launch/shutdown.ts";
import type { Logger } from "../log.ts";
import { observeSessions, sessionCapacity } from "../metrics/figures.ts";
import { startProcessMetrics } from "../metrics/registry.ts";
import type { Backend } from "../sessions/backend-seam.ts";
import type { SessionOwnership } from "../sessions/ownership-seam.ts";
import { ownershipHooks } from "./replication.ts";
import { RUNNER_VERSION } from "../version.ts";
import { startInternalServer } from "./internal-server.ts";
import { DEFAULT_TIMINGS, SessionService, type SupervisorTimings } from "./session-service.ts";

export type RunningSupervisor = {
  service: SessionService;
  /** The TCP port peers reach this supervisor on (RUNNER_PEER_LISTEN); undefined = none. */
  peerPort: number | undefined;
  /**
   * Closes the internal socket, its streams and terminals included. Session pods are left
   * running: Kubernetes is the record, and the next supervisor re-adopts them (a rolling update
   * or a restart must not end every user's session).
   */
  shutdown(): Promise<void>;
};

/**
 * `prepareSocketPath` must have run first: the process entry does it before anything else (a
 * supervisor that is going to be refused must not listen on the bundle port, watch or reap pods).
 */
export async function runSupervisor(options: {
  config: CoreConfig;
  backend: Backend;
  log: Logger;
  timings?: SupervisorTimings;
  /** Which sessions are this process's: one replica's, or several replicas' by their Leases (docs/replicas.md). */
  ownership: SessionOwnership;
}): Promise<RunningSupervisor> {
  startProcessMetrics("supervisor");
  const { ownership } = options;
  const service = new SessionService(options.config, options.backend, ownership, options.log, options.timings ?? DEFAULT_TIMINGS);
  observeSessions(() => service.registry.all());
  sessionCapacity(options.config.maxSessions);
  // What is this process's is taken over before it serves: a supervisor that says it is up
  // serves what it holds (one replica: every session an earlier supervisor left, then the
  // housekeeping; several: the shards of its first period).
  await ownership.start(ownershipHooks(service, options.log));
  const internal = await startInternalServer({
    socketPath: options.config.internalSocketPath,
    peer: peerListener(options.config),
    service,
    handoff: options.config.terminalHandoff,
    log: options.log,
  });
  service.startWatchSupervisor();
  // Adopted sessions' stream ids stay below a saved ceiling, whoever adopts them next (docs/replicas.md).
  const stopCeilings = service.ceilings.run();
  options.log.info("supervisor listening", { socket: options.config.internalSocketPath, peerPort: internal.peerPort, version: RUNNER_VERSION });
  return {
    service,
    peerPort: internal.peerPort,
    shutdown: async () => {
      // Sessions handed to the other replicas first, so clients told to reconnect find them there.
      await ownership.leave();
      stopCeilings();
      await within(EXIT_BUDGET.closeMs, internal.close());
    },
  };
}


/** The peer listener, when RUNNER_PEER_LISTEN is set (its loader requires the credential too). */
function peerListener(config: CoreConfig) {
  const { listen, secret } = config.peer;
  return listen && secret !== undefined ? { listen, secret } : undefined;
}

/**
 * Ends the process on SIGTERM/SIGINT, or when the `npm start` process that forked it is gone,
 * within SUPERVISOR_SHUTDOWN_BOUND_MS whatever a step is waiting on.
 */
export function stopOnSignals(supervisor: RunningSupervisor, log: Logger, afterShutdown: () => Promise<void> = async () => undefined): void {
  onStopRequest((reason) => {
    log.info("supervisor shutting down; session pods are left for the next supervisor to adopt", { reason });
    exitWithin(SUPERVISOR_SHUTDOWN_BOUND_MS, log);
    supervisor.shutdown().then(afterShutdown).then(
      () => process.exit(0),
      (error: unknown) => {
        log.error("shutdown failed", { error });
        process.exit(1);
      },
    );
  });
}
