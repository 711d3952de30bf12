/**
 * The runner against a simulated cluster owned by the test: the sim runs in the test process
 * (so tests reach its fault knobs and counters), the api and the supervisor run as their own
 * processes, exactly as the deployment's two containers do.
 */
import type { ChildProcess } from "node:child_process";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { CoreV1Api, NetworkingV1Api } from "@kubernetes/client-node";
import { RunnerClient } from "../../src/client/index.ts";
import { startLocalCluster } from "../../src/local-cluster.ts";
import type { SimulatedCluster, SimulatedClusterOptions } from "../../src/sim/index.ts";
import { freePort } from "./ports.ts";
import { capturedStderr, spawnTs, stopChild } from "./processes.ts";
import { waitFor } from "./wait.ts";

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

export async function startKubeRunner(options: { env?: Record<string, string>; sim?: SimulatedClusterOptions } = {}): Promise<KubeRunner> {
  const dir = await mkdtemp(join(tmpdir(), "k8s-runner-kube-"));
  const [port, bundlePort] = [await freePort(), await freePort()];
  const { cluster: sim, env } = await startLocalCluster(
    { PORT: String(port), RUNNER_BUNDLE_PORT: String(bundlePort), RUNNER_INTERNAL_SOCKET: join(dir, "supervisor.sock"), ...options.env },
    { podStartDelayMs: 20, backoffMs: 200, ...options.sim },
  );
  const core = sim.kubeConfig().makeApiClient(CoreV1Api);
  const networking = sim.kubeConfig().makeApiClient(NetworkingV1Api);
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
      supervisor = spawnTs("src/supervisor/main.ts", env);
      const child = supervisor;
      await waitFor("the supervisor's bundle listener", async () => {
        if (child.exitCode !== null) throw new Error(`supervisor exited (${child.exitCode}): ${capturedStderr(child)}`);
        return (await fetch(`http://127.0.0.1:${bundlePort}/healthz`)).ok || undefined;
      });
      // The internal socket opens after boot housekeeping; the api answers 503 until then.
      await waitFor("the supervisor's internal socket", async () => {
        if (child.exitCode !== null) throw new Error(`supervisor exited (${child.exitCode}): ${capturedStderr(child)}`);
        return (await fetch(`${baseUrl}/v1/sessions/none`).catch(() => undefined))?.status === 404 || !api || undefined;
      });
    },
    stopSupervisor: (signal) => stopChild(supervisor, signal),
    async startApi() {
      api = spawnTs("src/api/main.ts", env);
      const child = api;
      await waitFor("the api process", async () => {
        if (child.exitCode !== null) throw new Error(`api exited: ${capturedStderr(child)}`);
        return (await fetch(`${baseUrl}/v1/sessions/none`)).status === 404 || undefined;
      });
    },
    stopApi: (signal) => stopChild(api, signal),
    async sessionPods() {
      const pods = await core.listNamespacedPod({ namespace: SESSION_NAMESPACE });
      return pods.items.map((pod) => pod.metadata?.name ?? "");
    },
    async close() {
      await stopChild(api, "SIGKILL");
      await stopChild(supervisor);
      await sim.stop();
      await rm(dir, { recursive: true, force: true });
    },
  };
  await runner.startSupervisor();
  await runner.startApi();
  return runner;
}
