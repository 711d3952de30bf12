/**
 * `npm start`: the whole runner on one machine. The api process is this one; the supervisor
 * runs as a child that is restarted if it dies (its sessions are re-adopted from their pods).
 * With no cluster configured, the embedded simulated cluster is started first — loudly.
 */
import { type ChildProcess, fork } from "node:child_process";
import { fileURLToPath } from "node:url";
import { loadConsoleConfig } from "./config/console.ts";
import { loadCoreConfig } from "./config/core.ts";
import { loadKubeConfig } from "./config/kube.ts";
import { exitOnConfigError } from "./config/startup.ts";
import { startApiServer } from "./api/server.ts";
import { configuredCluster } from "./kube/cluster.ts";
import { createLogger } from "./log.ts";
import { startLocalCluster } from "./local-cluster.ts";
import type { SimulatedCluster } from "./sim/index.ts";

const RESTART_BACKOFF_MS = [250, 500, 1000, 2000, 5000];

const env: NodeJS.ProcessEnv = { ...process.env };
const core = exitOnConfigError(() => loadCoreConfig(env));
const log = createLogger("runner", core.logLevel);

let simulated: SimulatedCluster | undefined;
if (!configuredCluster(env)) {
  const local = await startLocalCluster(env);
  simulated = local.cluster;
  Object.assign(env, local.env);
  process.stderr.write(
    `\n  *** No Kubernetes cluster is configured: running against the EMBEDDED SIMULATED CLUSTER at ${simulated.url}.\n` +
      `  *** Nothing runs in a real cluster. kubeconfig: ${simulated.kubeconfigPath}\n\n`,
  );
}
exitOnConfigError(() => loadKubeConfig(env));

const supervisorEntry = fileURLToPath(new URL(`./supervisor/main${import.meta.url.endsWith(".ts") ? ".ts" : ".js"}`, import.meta.url));
let supervisor: ChildProcess | undefined;
let stopping = false;
let restarts = 0;

function startSupervisor(): void {
  const child = fork(supervisorEntry, { env, stdio: "inherit" });
  supervisor = child;
  const startedAt = Date.now();
  child.once("exit", (code, signal) => {
    if (stopping) return;
    // A configuration refusal will not get better by retrying.
    if (code === 2) {
      log.error("the supervisor refused its configuration; stopping");
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
const api = await startApiServer({
  port: core.port,
  socketPath: core.internalSocketPath,
  corsOrigins: core.corsOrigins,
  console: exitOnConfigError(() => loadConsoleConfig(env)).enabled,
  log: createLogger("api", core.logLevel),
});
log.info("k8s-runner listening", { url: `http://localhost:${api.port}/v1`, cluster: simulated ? "embedded simulated cluster" : "configured cluster" });

async function shutdown(exitCode = 0): Promise<void> {
  if (stopping) return;
  stopping = true;
  await api.close();
  if (supervisor && supervisor.exitCode === null && supervisor.signalCode === null) {
    const exited = new Promise((resolve) => supervisor?.once("exit", resolve));
    supervisor.kill("SIGTERM");
    await exited;
  }
  await simulated?.stop();
  process.exit(exitCode);
}

process.once("SIGTERM", () => void shutdown());
process.once("SIGINT", () => void shutdown());
