/**
 * The runner as the benchmarks drive it: the simulated cluster runs in the bench process (so
 * its counters are at hand and its kubelet starts pods instantly), the api and the supervisor
 * run as their own Node processes, exactly as the deployment's two containers do. Mirrors
 * test/support/kube-runner.ts, which bench code must not import (it holds a test's lifecycle;
 * the framework-free helpers of test/support, waiting, ports and the session body, are
 * shared), and adds what a benchmark
 * needs: the two pids (for resident memory) and a copy of a session pod's spec (for the
 * direct client-node baselines).
 */
import { type ChildProcess, spawn } from "node:child_process";
import { mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { CoreV1Api, type KubeConfig, type V1Pod } from "@kubernetes/client-node";
import { RunnerClient } from "../../src/client/index.ts";
import { NODE_RUNTIME_ENV, NODE_RUNTIME_FLAGS } from "../../src/launch/node-runtime.ts";
import { localClusterEnv, startLocalCluster } from "../../src/local-cluster/index.ts";
import type { SimulatedCluster } from "../../src/sim/index.ts";
import { freePort } from "../../test/support/ports.ts";
import { GiveUp, waitFor } from "../../test/support/wait.ts";
import { compiledEntry } from "./build.ts";

const ROOT = fileURLToPath(new URL("../..", import.meta.url));
export const SESSION_NAMESPACE = "telo-sessions";

export type BenchRunner = {
  sim: SimulatedCluster;
  kubeConfig: KubeConfig;
  core: CoreV1Api;
  client: RunnerClient;
  baseUrl: string;
  apiPid: number;
  supervisorPid: number;
  /** The supervisor's internal Unix socket (for looking behind the api when a figure needs it). */
  internalSocket: string;
  /** Signals the supervisor and waits for its exit (a replica leaving or killed). */
  stopSupervisor(signal: NodeJS.Signals): Promise<void>;
  /** SIGTERM to the api, and waits for its exit (a replica's other container leaving). */
  stopApi(): Promise<void>;
  close(): Promise<void>;
};

export type Child = ChildProcess & { stderrText: () => string };

export const API_ENTRY = "src/api/main.ts";
export const SUPERVISOR_ENTRY = "src/supervisor/main.ts";

/** `compiled`: the JavaScript compileRunner() wrote (as the image runs); `source`: through tsx. */
export type EntryMode = "compiled" | "source";

export function spawnEntry(entry: string, env: Record<string, string>, mode: EntryMode): Child {
  // BENCH_NODE_ARGS (e.g. "--cpu-prof --cpu-prof-dir=/tmp/prof") is for looking into a figure.
  const extra = process.env.BENCH_NODE_ARGS?.split(" ").filter(Boolean) ?? [];
  // As deployed: Node's memory settings (src/launch/node-runtime.ts) on every process measured.
  const args = [...NODE_RUNTIME_FLAGS, ...extra, ...(mode === "compiled" ? [compiledEntry(entry)] : ["--import", "tsx", join(ROOT, entry)])];
  const child = spawn(process.execPath, args, {
    cwd: ROOT,
    env: { PATH: process.env.PATH ?? "", HOME: process.env.HOME ?? "/tmp", LOG_LEVEL: process.env.BENCH_LOG_LEVEL ?? "warn", ...NODE_RUNTIME_ENV, ...env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  // Kept short: a benchmark run at scale must not hoard a chatty child's log.
  let stderr = "";
  child.stderr?.on("data", (chunk: Buffer) => {
    stderr = (stderr + chunk.toString()).slice(-8192);
    if (process.env.BENCH_VERBOSE) process.stderr.write(chunk);
  });
  child.stdout?.resume();
  return Object.assign(child, { stderrText: () => stderr });
}

export function stop(child: ChildProcess, signal: NodeJS.Signals = "SIGTERM"): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => {
    child.once("exit", () => resolve());
    child.kill(signal);
  });
}

/**
 * Starts the simulated cluster, the supervisor, then the api. `env` adds runner variables; the
 * session cap is lifted so the scale sections are not refused. The kubelet starts containers
 * instantly unless `podStartDelayMs` says otherwise (the realistic-start section).
 */
export async function startBenchRunner(options: {
  mode: EntryMode;
  env?: Record<string, string>;
  podStartDelayMs?: number;
  peer?: boolean;
  /** Another runner whose simulated cluster this one shares (several replicas); closed after this one. */
  beside?: BenchRunner;
  /** A simulated cluster started (and stopped) by the caller, already laid out (startLocalCluster). */
  cluster?: SimulatedCluster;
}): Promise<BenchRunner> {
  const dir = await mkdtemp(join(tmpdir(), "k8s-runner-bench-"));
  const [port, bundlePort] = [await freePort(), await freePort()];
  // The peer link (docs/relay.md): the api reaches its supervisor over TCP with the credential,
  // as an api of one replica reaches another replica's supervisor.
  const peer = options.peer
    ? { RUNNER_PEER_LISTEN: `127.0.0.1:${await freePort()}`, RUNNER_PEER_SECRET: "bench-peer-credential-0123456789abcdef" }
    : {};
  const own = {
    PORT: String(port),
    RUNNER_BUNDLE_PORT: String(bundlePort),
    RUNNER_INTERNAL_SOCKET: join(dir, "supervisor.sock"),
    RUNNER_MAX_SESSIONS: "10000",
    ...peer,
    ...options.env,
  };
  const shared = options.beside?.sim ?? options.cluster;
  const { cluster: sim, env } = shared
    ? { cluster: shared, env: localClusterEnv(shared, own) }
    : await startLocalCluster(own, { podStartDelayMs: options.podStartDelayMs ?? 0 });
  const kubeConfig = sim.kubeConfig();
  const core = kubeConfig.makeApiClient(CoreV1Api);
  const baseUrl = `http://127.0.0.1:${port}`;
  let supervisor: Child | undefined;
  let api: Child | undefined;
  // As the tests do: the api holds nothing worth a graceful end; the supervisor gets SIGTERM.
  const close = async () => {
    // A profiled api (BENCH_NODE_ARGS) must exit on its own to write its profile.
    if (api) await stop(api, process.env.BENCH_NODE_ARGS ? "SIGTERM" : "SIGKILL");
    if (supervisor) await stop(supervisor);
    if (!shared) await sim.stop();
    await rm(dir, { recursive: true, force: true });
  };
  try {
    const sup = spawnEntry(SUPERVISOR_ENTRY, env, options.mode);
    supervisor = sup;
    await waitFor("the supervisor's bundle listener", async () => {
      if (sup.exitCode !== null) throw new GiveUp(`supervisor exited (${sup.exitCode}): ${sup.stderrText()}`);
      return (await fetch(`http://127.0.0.1:${bundlePort}/healthz`)).ok || undefined;
    }, 30_000);
    const apiEnv = options.peer ? { ...env, RUNNER_PEER_SUPERVISOR: env.RUNNER_PEER_LISTEN! } : env;
    const apiChild = spawnEntry(API_ENTRY, apiEnv, options.mode);
    api = apiChild;
    // 404 for an unknown session means the api answers and the supervisor's socket is open.
    await waitFor("the api and the supervisor's internal socket", async () => {
      if (apiChild.exitCode !== null) throw new GiveUp(`api exited (${apiChild.exitCode}): ${apiChild.stderrText()}`);
      if (sup.exitCode !== null) throw new GiveUp(`supervisor exited (${sup.exitCode}): ${sup.stderrText()}`);
      return (await fetch(`${baseUrl}/v1/sessions/none`)).status === 404 || undefined;
    }, 30_000);
    return {
      sim,
      kubeConfig,
      core,
      client: new RunnerClient(baseUrl),
      baseUrl,
      apiPid: apiChild.pid!,
      supervisorPid: sup.pid!,
      internalSocket: env.RUNNER_INTERNAL_SOCKET!,
      stopSupervisor: (signal) => stop(sup, signal),
      stopApi: () => stop(apiChild),
      close,
    };
  } catch (error) {
    await close();
    throw error;
  }
}

/** The plainest run session (no build, no routing); `simulate` scripts the simulated container. */
/** Resident memory of a process in bytes (VmRSS of /proc/<pid>/status). */
export async function residentBytes(pid: number): Promise<number> {
  const status = await readFile(`/proc/${pid}/status`, "utf8");
  const kb = /^VmRSS:\s+(\d+)\s+kB$/m.exec(status)?.[1];
  if (kb === undefined) throw new Error(`no VmRSS for pid ${pid}`);
  return Number(kb) * 1024;
}

/**
 * The same pod the runner created, as a direct client would create it: the runner's spec
 * under a new name, without the runner's labels (so its informer never sees the copy) and
 * without what the cluster filled in.
 */
export function podCopy(pod: V1Pod, name: string): V1Pod {
  const spec = structuredClone(pod.spec!);
  delete spec.nodeName;
  // The bundle fetch spends the session's single-use token, which the runner's own pod already
  // spent; the copy's init containers keep their place and cost but do nothing (the simulated
  // cluster runs their command lines for real).
  for (const init of spec.initContainers ?? []) {
    init.command = ["true"];
    delete init.args;
  }
  return {
    apiVersion: "v1",
    kind: "Pod",
    metadata: { name, ...(pod.metadata?.annotations && { annotations: { ...pod.metadata.annotations } }) },
    spec,
  };
}

/** CPU time (user + system) a process has used so far, in milliseconds, from /proc/<pid>/stat. */
export async function cpuMs(pid: number): Promise<number> {
  const stat = await readFile(`/proc/${pid}/stat`, "utf8");
  // Fields after the command name (which may hold spaces) start after the last ')'.
  const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  const ticks = Number(fields[11]) + Number(fields[12]);
  return (ticks * 1000) / CLOCK_TICKS;
}

/** USER_HZ; 100 on every Linux this runs on (getconf CLK_TCK). */
const CLOCK_TICKS = 100;

/** CPU milliseconds of the api, the supervisor and this process (the sim and the clients). */
export async function cpuSnapshot(runner: Pick<BenchRunner, "apiPid" | "supervisorPid">): Promise<{ api: number; supervisor: number; bench: number }> {
  const own = process.cpuUsage();
  return { api: await cpuMs(runner.apiPid), supervisor: await cpuMs(runner.supervisorPid), bench: (own.user + own.system) / 1000 };
}

/** Runs a bench module in a child Node process (through tsx) and parses its last stdout line as JSON. */
export async function runChildJson<T>(entry: string, args: string[], nodeArgs: string[] = []): Promise<T> {
  const child = spawn(process.execPath, [...nodeArgs, "--import", "tsx", join(ROOT, entry), ...args], {
    cwd: ROOT,
    env: { PATH: process.env.PATH ?? "", HOME: process.env.HOME ?? "/tmp" },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let out = "";
  let err = "";
  child.stdout.on("data", (chunk: Buffer) => (out += chunk.toString()));
  child.stderr.on("data", (chunk: Buffer) => (err = (err + chunk.toString()).slice(-8192)));
  const code = await new Promise<number | null>((resolve) => child.once("exit", resolve));
  const line = out.trim().split("\n").at(-1) ?? "";
  if (code !== 0 || !line.startsWith("{")) throw new Error(`${entry} exited ${code}: ${err || out}`);
  return JSON.parse(line) as T;
}

/**
 * What a Node process holds before any runner code: bare, and with @kubernetes/client-node
 * loaded (the supervisor's and the api's largest dependency). For reading the memory figures.
 */
export async function floorRss(): Promise<{ bare: number; clientNode: number }> {
  const measure = async (code: string) => {
    const child = spawn(process.execPath, ["--input-type=module", "-e", `${code}; console.log("ready"); setInterval(() => {}, 1000);`], {
      cwd: ROOT,
      stdio: ["ignore", "pipe", "ignore"],
    });
    await new Promise<void>((resolve, reject) => {
      child.stdout.on("data", (chunk: Buffer) => chunk.toString().includes("ready") && resolve());
      child.once("exit", (exitCode) => reject(new Error(`floor process exited ${exitCode}`)));
    });
    await new Promise((resolve) => setTimeout(resolve, 1000));
    const rss = await residentBytes(child.pid!);
    await stop(child, "SIGKILL");
    return rss;
  };
  return { bare: await measure("void 0"), clientNode: await measure('await import("@kubernetes/client-node")') };
}
