/**
 * `npm start`: the whole runner on one machine. The api process is this one and loads only
 * what it serves (no Kubernetes client, no simulator); the supervisor runs as a child that is
 * restarted if it dies (its sessions are re-adopted from their pods). With no cluster
 * configured, the embedded simulated cluster runs first, in a child of its own — loudly.
 * Both children end with this process, however it ends.
 */
import { type ChildProcess, fork } from "node:child_process";
import { dirname } from "node:path";
import { loadConsoleConfig } from "./config/console.ts";
import { startApiServer } from "./api/server.ts";
import { loadCoreConfig } from "./config/core.ts";
import { currentEnv } from "./config/environment.ts";
import { loadKubeConfig } from "./config/kube.ts";
import { exitOnConfigError } from "./config/startup.ts";
import { loadTracingConfig } from "./config/tracing.ts";
import { entryPath } from "./install-layout.ts";
import { ensurePrivateDirectory } from "./internal/socket-path.ts";
import { PortInUseError } from "./internal/listen.ts";
import { embeddedClusterUnlessConfigured } from "./launch/embedded-cluster.ts";
import type { LocalClusterProcess } from "./launch/local-cluster-process.ts";
import { forkWithNodeRuntime } from "./launch/node-runtime.ts";
import { onStopRequest } from "./launch/parent.ts";
import { exitOnStartupRefusal } from "./launch/refusal.ts";
import { API_SHUTDOWN_BOUND_MS, exitWithin } from "./launch/shutdown.ts";
import { createLogger } from "./log.ts";
import { logProcessErrors } from "./launch/process-errors.ts";
import { startIdleCollection } from "./launch/idle-collection.ts";
import { flushTracing, startTracing } from "./launch/tracing.ts";
import { RUNNER_VERSION } from "./version.ts";

const RESTART_BACKOFF_MS = [250, 500, 1000, 2000, 5000];
/** On one machine the api answers locally unless RUNNER_BIND_ADDRESS says otherwise. */
const LOCAL_BIND_ADDRESS = "127.0.0.1";

const env = currentEnv();
let supervisor: ChildProcess | undefined;
let simulated: LocalClusterProcess | undefined;
let stopping = false;
let restarts = 0;
let core = exitOnConfigError(() => loadCoreConfig(env));
const log = createLogger("runner", core.logLevel);
logProcessErrors(log);
startIdleCollection(log);
// The api runs in this process; the supervisor child reads the same variables and traces itself.
const tracing = exitOnConfigError(() => loadTracingConfig(env));
if (await startTracing(tracing, { process: "api", replica: core.replicas.identity, version: RUNNER_VERSION })) log.info("tracing on", { exporter: tracing.enabled ? tracing.exporter.kind : undefined });
const host = core.access.bindAddress ?? LOCAL_BIND_ADDRESS;

// The api listens first: it answers 503 until the supervisor is up, and the port it gets
// decides the default socket path. A second runner on this machine with nothing configured
// takes a free port instead of failing; a port that was asked for and is taken is one line.
const apiOptions = {
  host,
  socketPath: (port: number) => {
    // The supervisor child derives the same default socket path from the same PORT.
    env.PORT = String(port);
    core = exitOnConfigError(() => loadCoreConfig(env));
    return core.internalSocketPath;
  },
  corsOrigins: core.corsOrigins,
  access: core.access,
  console: exitOnConfigError(() => loadConsoleConfig(env)).enabled,
  // One of several replicas (docs/replicas.md): sessions of other replicas are forwarded.
  replicas: core.replicas.identity !== undefined ? { credential: core.peer.secret } : undefined,
  log: createLogger("api", core.logLevel),
};
const wanted = core.port;
const api = await startApiServer({ ...apiOptions, port: wanted }).catch(async (error: unknown) => {
  if (!(error instanceof PortInUseError) || !core.portIsDefault) return exitOnStartupRefusal(error);
  const fallback = await startApiServer({ ...apiOptions, port: 0 }).catch(exitOnStartupRefusal);
  process.stderr.write(`port ${wanted} is taken (another runner?); this runner's api uses port ${fallback.port}\n`);
  return fallback;
});
if (core.internalSocketIsDefault) await ensurePrivateDirectory(dirname(core.internalSocketPath)).catch(exitOnStartupRefusal);

simulated = await embeddedClusterUnlessConfigured(env);
simulated?.child.once("exit", (code, signal) => {
  if (stopping) return;
  log.error("the embedded simulated cluster exited; stopping", { code, signal });
  void shutdown(1);
});
exitOnConfigError(() => loadKubeConfig(env));

const supervisorEntry = entryPath("supervisor/main");

function startSupervisor(): void {
  // Node's memory settings as the image runs it (this process was started by whoever ran it).
  const child = fork(supervisorEntry, { ...forkWithNodeRuntime(env), stdio: "inherit" });
  supervisor = child;
  const startedAt = Date.now();
  child.once("exit", (code, signal) => {
    if (stopping) return;
    // A refusal (configuration, a taken port, an unsafe socket) will not get better by retrying.
    if (code === 2) {
      log.error("the supervisor refused to start; stopping");
      void shutdown(2);
      return;
    }
    if (Date.now() - startedAt > 30_000) restarts = 0;
    const delay = RESTART_BACKOFF_MS[Math.min(restarts, RESTART_BACKOFF_MS.length - 1)]!;
    restarts += 1;
    log.warn("supervisor exited; restarting", { code, signal, inMs: delay });
    setTimeout(() => !stopping && startSupervisor(), delay);
  });
}

startSupervisor();
log.info("k8s-runner listening", { url: `${api.url}/v1`, cluster: simulated ? "embedded simulated cluster" : "configured cluster" });
// A parent that forked this runner learns where it listens without reading its logs.
process.send?.({ kind: "listening", url: api.url });

function exited(child: ChildProcess | undefined): Promise<unknown> {
  if (!child || child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => child.once("exit", resolve));
}

async function shutdown(exitCode = 0): Promise<void> {
  if (stopping) return;
  stopping = true;
  exitWithin(API_SHUTDOWN_BOUND_MS, log);
  await api.close();
  const supervisorGone = exited(supervisor);
  supervisor?.kill("SIGTERM");
  await supervisorGone;
  await simulated?.stop();
  await flushTracing();
  process.exit(exitCode);
}

// A parent holding a channel to this runner (k8s-runner/testing forks it) takes it along when it dies.
onStopRequest(() => void shutdown());
