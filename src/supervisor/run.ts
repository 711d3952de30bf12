/**
 * Runs the supervisor around a backend: the session service, the internal socket, the watch
 * supervisor. The process entry (main.ts) and the tests' entries share it.
 */
import type { CoreConfig } from "../config/core.ts";
import { onStopRequest } from "../launch/parent.ts";
import { SUPERVISOR_SHUTDOWN_BOUND_MS, exitWithin } from "../launch/shutdown.ts";
import type { Logger } from "../log.ts";
import { observeSessions } from "../metrics/figures.ts";
import { startProcessMetrics } from "../metrics/registry.ts";
import type { Backend } from "../sessions/backend-seam.ts";
import type { CoordinatorHooks, ReplicaCoordinator } from "../replicas/coordinator.ts";
import { shareSessions } from "./replication.ts";
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
  /** Several replicas: the coordination, made around the hooks that move sessions (docs/replicas.md). */
  coordinate?: (hooks: CoordinatorHooks) => ReplicaCoordinator;
}): Promise<RunningSupervisor> {
  startProcessMetrics("supervisor");
  const service = new SessionService(options.config, options.backend, options.log, options.timings ?? DEFAULT_TIMINGS);
  observeSessions(() => service.registry.all());
  const coordinator = options.coordinate ? shareSessions(service, options.coordinate, options.log) : undefined;
  if (!coordinator) {
    // Housekeeping before serving: what an earlier supervisor left is re-adopted or reaped.
    const adopted = await service.adoptSessions();
    if (adopted > 0) options.log.info("re-adopted sessions", { count: adopted });
  }
  const internal = await startInternalServer({
    socketPath: options.config.internalSocketPath,
    peer: peerListener(options.config),
    service,
    log: options.log,
  });
  service.startWatchSupervisor();
  // Adopted sessions' stream ids stay below a saved ceiling, whoever adopts them next (docs/replicas.md).
  const stopCeilings = service.ceilings.run();
  // The first period before "listening": a replica that says it is up has its shards.
  await coordinator?.start();
  options.log.info("supervisor listening", { socket: options.config.internalSocketPath, peerPort: internal.peerPort, version: RUNNER_VERSION });
  return {
    service,
    peerPort: internal.peerPort,
    shutdown: async () => {
      // Sessions handed to the other replicas first, so clients told to reconnect find them there.
      await coordinator?.handOver();
      stopCeilings();
      await internal.close();
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
