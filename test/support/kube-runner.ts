/**
 * The runner against a simulated cluster owned by the test: the sim runs in the test process
 * (so tests reach its fault knobs and counters), the api and the supervisor run as their own
 * processes, exactly as the deployment's two containers do.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { CoreV1Api, NetworkingV1Api } from "@kubernetes/client-node";
import { RunnerClient } from "../../src/client/index.ts";
import { type SimulatedCluster, type SimulatedClusterOptions, startSimulatedCluster } from "../../src/sim/index.ts";
import { capturedStderr, freePort, waitFor } from "./processes.ts";

const ROOT = fileURLToPath(new URL("../..", import.meta.url));
export const SESSION_NAMESPACE = "telo-sessions";

export type KubeRunner = {
  sim: SimulatedCluster;
  core: CoreV1Api;
  networking: NetworkingV1Api;
  client: RunnerClient;
  baseUrl: string;
  startSupervisor(): Promise<void>;
  stopSupervisor(signal?: NodeJS.Signals): Promise<void>;
  startApi(): Promise<void>;
  stopApi(signal?: NodeJS.Signals): Promise<void>;
  /** Session pods currently in the namespace. */
  sessionPods(): Promise<string[]>;
  close(): Promise<void>;
};

function spawnEntry(entry: string, env: Record<string, string>): ChildProcess {
  const child = spawn(process.execPath, ["--import", "tsx", join(ROOT, entry)], {
    cwd: ROOT,
    env: { PATH: process.env.PATH ?? "", HOME: process.env.HOME ?? "/tmp", LOG_LEVEL: "warn", ...env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let stderr = "";
  child.stderr?.on("data", (chunk: Buffer) => {
    stderr += chunk.toString();
    if (process.env.TEST_VERBOSE) process.stderr.write(chunk);
  });
  child.stdout?.on("data", (chunk: Buffer) => {
    if (process.env.TEST_VERBOSE) process.stdout.write(chunk);
  });
  Object.defineProperty(child, "capturedStderr", { get: () => stderr });
  return child;
}

function stop(child: ChildProcess | undefined, signal: NodeJS.Signals = "SIGTERM"): Promise<void> {
  if (!child || child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => {
    child.once("exit", () => resolve());
    child.kill(signal);
  });
}

export async function startKubeRunner(options: { env?: Record<string, string>; sim?: SimulatedClusterOptions } = {}): Promise<KubeRunner> {
  const sim = await startSimulatedCluster({ podStartDelayMs: 20, backoffMs: 200, ...options.sim });
  const core = sim.kubeConfig().makeApiClient(CoreV1Api);
  const networking = sim.kubeConfig().makeApiClient(NetworkingV1Api);
  for (const [name, level] of [[SESSION_NAMESPACE, "restricted"], ["telo-builds", "baseline"]] as const) {
    await core.createNamespace({ body: { metadata: { name, labels: { "pod-security.kubernetes.io/enforce": level } } } });
  }
  const dir = await mkdtemp(join(tmpdir(), "k8s-runner-kube-"));
  const [port, bundlePort] = [await freePort(), await freePort()];
  const env: Record<string, string> = {
    PORT: String(port),
    RUNNER_BUNDLE_PORT: String(bundlePort),
    RUNNER_SELF_URL: `http://127.0.0.1:${bundlePort}`,
    RUNNER_INTERNAL_SOCKET: join(dir, "supervisor.sock"),
    KUBECONFIG: sim.kubeconfigPath,
    RUNNER_SIMULATED_CLUSTER: "true",
    RUNNER_BASE_IMAGE_CATALOG_ENABLED: "false",
    ...options.env,
  };
  const baseUrl = `http://127.0.0.1:${port}`;
  let api: ChildProcess | undefined;
  let supervisor: ChildProcess | undefined;

  const runner: KubeRunner = {
    sim,
    core,
    networking,
    client: new RunnerClient(baseUrl),
    baseUrl,
    async startSupervisor() {
      supervisor = spawnEntry("src/supervisor/main.ts", env);
      const child = supervisor;
      await waitFor(async () => {
        if (child.exitCode !== null) throw new Error(`supervisor exited (${child.exitCode}): ${capturedStderr(child)}`);
        return (await fetch(`http://127.0.0.1:${bundlePort}/healthz`)).ok || undefined;
      }, "the supervisor's bundle listener");
      // The internal socket opens after boot housekeeping; the api answers 503 until then.
      await waitFor(async () => {
        if (child.exitCode !== null) throw new Error(`supervisor exited (${child.exitCode}): ${capturedStderr(child)}`);
        return (await fetch(`${baseUrl}/v1/sessions/none`).catch(() => undefined))?.status === 404 || !api || undefined;
      }, "the supervisor's internal socket");
    },
    stopSupervisor: (signal) => stop(supervisor, signal),
    async startApi() {
      api = spawnEntry("src/api/main.ts", env);
      const child = api;
      await waitFor(async () => {
        if (child.exitCode !== null) throw new Error(`api exited: ${capturedStderr(child)}`);
        return (await fetch(`${baseUrl}/v1/sessions/none`)).status === 404 || undefined;
      }, "the api process");
    },
    stopApi: (signal) => stop(api, signal),
    async sessionPods() {
      const pods = await core.listNamespacedPod({ namespace: SESSION_NAMESPACE });
      return pods.items.map((pod) => pod.metadata?.name ?? "");
    },
    async close() {
      await stop(api, "SIGKILL");
      await stop(supervisor);
      await sim.stop();
      await rm(dir, { recursive: true, force: true });
    },
  };
  await runner.startSupervisor();
  await runner.startApi();
  return runner;
}

/** A run session body for the Kubernetes backend; `simulate` scripts the simulated container. */
export function kubeSessionBody(simulate: Record<string, string | number | boolean> = {}, overrides: Record<string, unknown> = {}) {
  return {
    bundle: { entryRelativePath: "telo.yaml", files: [{ relativePath: "telo.yaml", contents: "kind: Telo.Application\n" }] },
    env: {},
    config: { image: "telorun/node:latest-slim", pullPolicy: "missing", simulate },
    ...overrides,
  } as Parameters<RunnerClient["createSession"]>[0];
}
