/**
 * The api process entry: `/v1` over HTTP, state in the supervisor. Started alone in the
 * deployment (one container) or by src/main.ts beside a supervisor child.
 */
import { loadConsoleConfig } from "../config/console.ts";
import { dirname } from "node:path";
import { loadCoreConfig } from "../config/core.ts";
import { currentEnv } from "../config/environment.ts";
import { exitOnConfigError } from "../config/startup.ts";
import { loadTracingConfig } from "../config/tracing.ts";
import { handoffSocketPath } from "../internal/handle-channel.ts";
import { ensurePrivateDirectory } from "../internal/socket-path.ts";
import { startIdleCollection } from "../launch/idle-collection.ts";
import { exitOnStartupRefusal } from "../launch/refusal.ts";
import { onStopRequest } from "../launch/parent.ts";
import { API_SHUTDOWN_BOUND_MS, exitWithin } from "../launch/shutdown.ts";
import { createLogger } from "../log.ts";
import { logProcessErrors } from "../launch/process-errors.ts";
import { flushTracing, startTracing } from "../launch/tracing.ts";
import { RUNNER_VERSION } from "../version.ts";
import { startApiServer } from "./server.ts";

/** The deployment's pod IP must be reachable by the Service; RUNNER_BIND_ADDRESS narrows it. */
const DEFAULT_BIND_ADDRESS = "0.0.0.0";

const env = currentEnv();
const config = exitOnConfigError(() => loadCoreConfig(env));
const consoleConfig = exitOnConfigError(() => loadConsoleConfig(env));
const tracing = exitOnConfigError(() => loadTracingConfig(env));
const log = createLogger("api", config.logLevel);
logProcessErrors(log);
startIdleCollection(log);
if (await startTracing(tracing, { process: "api", replica: config.replicas.identity, version: RUNNER_VERSION })) log.info("tracing on", { exporter: tracing.enabled ? tracing.exporter.kind : undefined });
if (config.internalSocketIsDefault) await ensurePrivateDirectory(dirname(config.internalSocketPath)).catch(exitOnStartupRefusal);
const host = config.access.bindAddress ?? DEFAULT_BIND_ADDRESS;
const { supervisor: peerSupervisor, secret } = config.peer;
const supervisorTarget = peerSupervisor && secret !== undefined ? { ...peerSupervisor, credential: secret } : config.internalSocketPath;
const server = await startApiServer({
  port: config.port,
  host,
  socketPath: () => supervisorTarget,
  replicas: config.replicas.identity !== undefined ? { credential: secret } : undefined,
  corsOrigins: config.corsOrigins,
  access: config.access,
  console: consoleConfig.enabled,
  // Only to a supervisor in this pod: a socket cannot be handed to another host.
  handoffPath: config.terminalHandoff && typeof supervisorTarget === "string" ? handoffSocketPath(supervisorTarget) : undefined,
  log,
}).catch(exitOnStartupRefusal);
log.info("api listening", { url: `http://${host}:${server.port}`, supervisor: supervisorTarget === config.internalSocketPath ? supervisorTarget : `${peerSupervisor?.host}:${peerSupervisor?.port}` });

// Started by a process that holds a channel to it (a test, a script), it also goes when that one does.
onStopRequest((reason) => {
  log.info("api shutting down", { reason });
  exitWithin(API_SHUTDOWN_BOUND_MS, log);
  void server.close().then(flushTracing).then(() => process.exit(0));
});
