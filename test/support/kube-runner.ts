/**
 * The runner's two processes (api and supervisor, exactly as the deployment's two containers)
 * against a cluster: the one fixture of the Kubernetes-facing tests.
 *
 * - `startClusterRunner` drives whichever cluster the run selects: the simulated one in
 *   `npm test`, the real one of test/cluster/ in `npm run test:cluster` (K8S_RUNNER_TEST_CLUSTER
 *   =real, set by test/cluster/vitest.config.ts). Tests written against it run on both.
 * - `startKubeRunner` is the simulated cluster only, owned by the test process so tests reach its
 *   fault knobs and counters; tests that need those stay on the simulator.
 */
import type { ChildProcess } from "node:child_process";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { CoreV1Api, KubeConfig, NetworkingV1Api } from "@kubernetes/client-node";
import { expect, inject } from "vitest";
import { RunnerClient } from "../../src/client/index.ts";
import { localClusterEnv, startLocalCluster } from "../../src/local-cluster/index.ts";
import type { SimulatedCluster, SimulatedClusterOptions } from "../../src/sim/index.ts";
import { freePort } from "./ports.ts";
import { capturedStderr, spawnTs, stopChild } from "./processes.ts";
import { eventsUntil, framesUntilText, isStatus, textOf } from "./streams.ts";
import { waitFor } from "./wait.ts";
import { standinManifest } from "../cluster/standin.ts";
import { sessionBody } from "./session-body.ts";

/** The run drives the real cluster of test/cluster/ (`npm run test:cluster`). */
export const ON_REAL_CLUSTER = process.env.K8S_RUNNER_TEST_CLUSTER === "real";

export const SESSION_NAMESPACE = "telo-sessions";

/** The runner on either cluster. */
export type ClusterRunner = {
  cluster: "simulated" | "real";
  /** The test's own client configuration (the simulator's, or the real cluster's admin). */
  kubeConfig: KubeConfig;
  /** A RuntimeClass the cluster has (the real apiserver refuses pods naming one it lacks). */
  runtimeClass: string | undefined;
  core: CoreV1Api;
  networking: NetworkingV1Api;
  client: RunnerClient;
  baseUrl: string;
  startSupervisor(): Promise<void>;
  stopSupervisor(signal?: NodeJS.Signals): Promise<void>;
  /** Sends the supervisor a signal without waiting for anything (SIGSTOP and SIGCONT pause and resume it). */
  signalSupervisor(signal: NodeJS.Signals): void;
  /** The same for the api process. */
  signalApi(signal: NodeJS.Signals): void;
  /** The process ids of the api and the supervisor now (a CPU cgroup can hold them). */
  pids(): number[];
  startApi(): Promise<void>;
  stopApi(signal?: NodeJS.Signals): Promise<void>;
  /** Session pods currently in the namespace. */
  sessionPods(): Promise<string[]>;
  /** Every log line both processes wrote so far, across restarts (at the run's LOG_LEVEL). */
  logs(): string;
  close(): Promise<void>;
};

/** The runner on the simulated cluster, with the simulator itself. */
export type KubeRunner = ClusterRunner & { sim: SimulatedCluster };

type RunnerOptions = {
  env?: Record<string, string>;
  sim?: SimulatedClusterOptions;
  /**
   * A runner already running whose cluster this one shares (its own processes, ports and
   * socket): several runners against one cluster. Close it after this one, which leaves the
   * cluster running.
   */
  beside?: ClusterRunner;
  /**
   * Both processes started as deployed, with no channel to this test process, so that the api
   * hands its terminals to its supervisor (docs/relay.md "The handoff"); otherwise it splices them.
   */
  handoff?: boolean;
};

/** What the runner's processes need besides the cluster: ports and the internal socket. */
async function processEnv(dir: string): Promise<{ port: number; bundlePort: number; env: Record<string, string> }> {
  const [port, bundlePort] = [await freePort(), await freePort()];
  return { port, bundlePort, env: { PORT: String(port), RUNNER_BUNDLE_PORT: String(bundlePort), RUNNER_INTERNAL_SOCKET: join(dir, "supervisor.sock") } };
}

export async function startKubeRunner(options: RunnerOptions = {}): Promise<KubeRunner> {
  const dir = await mkdtemp(join(tmpdir(), "k8s-runner-kube-"));
  const { port, bundlePort, env: own } = await processEnv(dir);
  const shared = options.beside && "sim" in options.beside ? (options.beside as KubeRunner).sim : undefined;
  if (options.beside && !shared) throw new Error("a runner beside another on the simulated cluster needs that runner's simulator");
  const { cluster: sim, env } = shared
    ? { cluster: shared, env: localClusterEnv(shared, { ...own, ...options.env }) }
    : await startLocalCluster({ ...own, ...options.env }, { podStartDelayMs: 20, backoffMs: 200, ...options.sim });
  const stopCluster = shared ? async () => undefined : () => sim.stop();
  const runner = await startProcesses({ cluster: "simulated", kubeConfig: sim.kubeConfig(), runtimeClass: undefined, env, port, bundlePort, dir, stopCluster, handoff: options.handoff });
  return Object.assign(runner, { sim });
}

/**
 * The runner against the cluster the run selects. On the real one it authenticates as its own
 * ServiceAccount (k8s/base's RBAC), pods fetch bundles from this machine over the bridge, and the
 * images are the local ones test/cluster/build.sh made; the test's own client is the admin.
 * There is one real cluster, so every runner of a run shares it (`beside` changes nothing).
 */
export async function startClusterRunner(options: RunnerOptions = {}): Promise<ClusterRunner> {
  if (!ON_REAL_CLUSTER) return startKubeRunner(options);
  const real = inject("realCluster");
  const dir = await mkdtemp(join(tmpdir(), "k8s-runner-kube-"));
  const { port, bundlePort, env: own } = await processEnv(dir);
  const env = {
    ...own,
    KUBECONFIG: real.runnerKubeconfig,
    RUNNER_SESSION_NAMESPACE: SESSION_NAMESPACE,
    RUNNER_SELF_URL: `http://${real.hostAddress}:${bundlePort}`,
    RUNNER_IMAGE: real.kernelImage,
    RUNNER_INIT_IMAGE: real.initImage,
    RUNNER_RUNTIME_CLASS: real.runtimeClass,
    RUNNER_BASE_IMAGE_CATALOG_ENABLED: "false",
    ...options.env,
  };
  const kubeConfig = new KubeConfig();
  kubeConfig.loadFromFile(real.adminKubeconfig);
  return startProcesses({ cluster: "real", kubeConfig, runtimeClass: real.runtimeClass, env, port, bundlePort, dir, stopCluster: async () => undefined, handoff: options.handoff });
}

async function startProcesses(input: {
  cluster: ClusterRunner["cluster"];
  kubeConfig: KubeConfig;
  runtimeClass: string | undefined;
  env: Record<string, string>;
  port: number;
  bundlePort: number;
  dir: string;
  stopCluster(): Promise<void>;
  handoff?: boolean | undefined;
}): Promise<ClusterRunner> {
  const { env, port, bundlePort, dir } = input;
  const core = input.kubeConfig.makeApiClient(CoreV1Api);
  const networking = input.kubeConfig.makeApiClient(NetworkingV1Api);
  const baseUrl = `http://127.0.0.1:${port}`;
  let api: ChildProcess | undefined;
  let supervisor: ChildProcess | undefined;
  const started: ChildProcess[] = [];

  const runner: ClusterRunner = {
    cluster: input.cluster,
    kubeConfig: input.kubeConfig,
    runtimeClass: input.runtimeClass,
    core,
    networking,
    client: new RunnerClient(baseUrl),
    baseUrl,
    async startSupervisor() {
      supervisor = spawnTs("src/supervisor/main.ts", env, { channel: !input.handoff });
      const child = supervisor;
      started.push(child);
      await waitFor("the supervisor's bundle listener", async () => {
        if (child.exitCode !== null) throw new Error(`supervisor exited (${child.exitCode}): ${capturedStderr(child)}`);
        return (await fetch(`http://127.0.0.1:${bundlePort}/healthz`)).ok || undefined;
      });
      // The internal socket opens after boot housekeeping; the api answers 503 until then.
      await waitFor("the supervisor's internal socket", async () => {
        if (child.exitCode !== null) throw new Error(`supervisor exited (${child.exitCode}): ${capturedStderr(child)}`);
        return !api || (await supervisorAnswers(baseUrl)) || undefined;
      });
    },
    stopSupervisor: (signal) => stopChild(supervisor, signal),
    signalSupervisor: (signal) => void supervisor?.kill(signal),
    signalApi: (signal) => void api?.kill(signal),
    pids: () => [api?.pid, supervisor?.pid].filter((pid): pid is number => pid !== undefined),
    async startApi() {
      api = spawnTs("src/api/main.ts", env, { channel: !input.handoff });
      const child = api;
      started.push(child);
      await waitFor("the api process", async () => {
        if (child.exitCode !== null) throw new Error(`api exited: ${capturedStderr(child)}`);
        return (await supervisorAnswers(baseUrl)) || undefined;
      });
    },
    stopApi: (signal) => stopChild(api, signal),
    async sessionPods() {
      const pods = await core.listNamespacedPod({ namespace: SESSION_NAMESPACE });
      return pods.items.map((pod) => pod.metadata?.name ?? "");
    },
    logs: () => started.map((child) => capturedStderr(child)).join(""),
    async close() {
      await stopChild(api, "SIGKILL");
      await stopChild(supervisor);
      await input.stopCluster();
      await rm(dir, { recursive: true, force: true });
    },
  };
  try {
    await runner.startSupervisor();
    await runner.startApi();
  } catch (error) {
    // A start that failed halfway leaves nothing running for the next test.
    await runner.close().catch(() => undefined);
    throw error;
  }
  return runner;
}

/**
 * Whether the api reaches a supervisor that answers for sessions: an unknown session is 404, or,
 * among several replicas, 503 `session_moving` when its shard is held by no replica yet or by one
 * of another placement (anything but `supervisor_unavailable`).
 */
async function supervisorAnswers(baseUrl: string): Promise<boolean> {
  const response = await fetch(`${baseUrl}/v1/sessions/none`).catch(() => undefined);
  if (response?.status === 404) return true;
  if (response?.status !== 503) return false;
  const body = (await response.json().catch(() => ({}))) as { error?: string };
  return body.error === "session_moving";
}

/**
 * A run session body for the Kubernetes backend. `simulate` scripts the container: on the
 * simulated cluster through `config.simulate`, on the real one through the kernel stand-in's
 * lines in the bundle's manifest (test/cluster/standin.ts), so one test scripts both alike.
 */
export function kubeSessionBody(simulate: Record<string, string | number | boolean> = {}, overrides: Record<string, unknown> = {}) {
  const body = sessionBody({ simulate }, overrides);
  return ON_REAL_CLUSTER ? standinBody(body, simulate) : body;
}

/**
 * The same body for the kernel stand-in: its image, and `simulate` written into the manifest of
 * every app (a run session's one app is the bundle's entry), each with that app's ports.
 */
function standinBody(body: Parameters<RunnerClient["createSession"]>[0], simulate: Record<string, string | number | boolean>) {
  const real = inject("realCluster");
  const pullFails = simulate["image-pull"] === "fail";
  // The container each entry runs in, as the pod builders name it (src/kube/specs).
  const apps = body.apps?.map((app) => ({ ...app, container: `app-${app.name}` })) ?? [
    { entryRelativePath: body.bundle.entryRelativePath, ports: body.ports ?? [], container: "session" },
  ];
  // The create body's input type leaves a port unparsed; these bodies are the tests' own, with numbers.
  type Port = { port: number; protocol: "tcp" | "udp" };
  const portsOf = (app: (typeof apps)[number]): Port[] => (simulate.listen === false ? [] : ((app.ports ?? []) as Port[]));
  const script = (path: string) => {
    const app = apps.find((candidate) => candidate.entryRelativePath === path);
    return app ? standinManifest(simulate, portsOf(app), app.container) : "";
  };
  return {
    ...body,
    bundle: { ...body.bundle, files: body.bundle.files.map((file) => ({ ...file, contents: `${file.contents}${script(file.relativePath)}` })) },
    // A registry name that resolves nowhere: the kubelet's pull fails and backs off, as with the simulator's `image-pull: fail`.
    config: { ...body.config, image: pullFails ? "registry.invalid/nonexistent:1" : real.kernelImage },
  } as Parameters<RunnerClient["createSession"]>[0];
}

/** A default session created through `via` and followed until it runs; its id. */
export async function runningSession(via: ClusterRunner, simulate: Record<string, string | number | boolean> = {}): Promise<string> {
  const { sessionId } = await via.client.createSession(kubeSessionBody(simulate));
  await eventsUntil(via.client, sessionId, isStatus("running"));
  return sessionId;
}

/** Types `text` into the session's terminal through `via` and sees it echoed. */
export async function echoes(via: ClusterRunner, sessionId: string, text: string): Promise<void> {
  const terminal = via.client.terminal(sessionId);
  await terminal.send(`${text}\r`);
  expect(textOf(await framesUntilText(terminal, text))).toContain(text);
  terminal.close();
}
