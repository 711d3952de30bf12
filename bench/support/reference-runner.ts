/**
 * The reference runner (@telorun/k8s-runner, from the telorun/telo repository) as bench/reference.ts
 * drives it: an already-built copy outside this repository (REFERENCE_RUNNER_DIR, prepared as
 * docs/benchmarks.md describes; nothing here fetches or builds it), started as its own Node
 * process against the bench's simulated cluster, in namespaces of its own.
 *
 * What it needs that our runner does not:
 * - RUNNER_SELF_URL, the URL its pods fetch their bundle from: its own port on loopback (it
 *   listens on 0.0.0.0; its server has no bind-address setting).
 * - RUNNER_IMAGE_REPOSITORY (required: it builds a per-app image with a Kaniko Job unless its
 *   registry already holds one). A manifest stub below answers every manifest HEAD with 200, so
 *   it finds its image "cached", as in its steady state, and starts no build: the comparison is
 *   of two runners starting a pod, not of a build. Its base-image catalog (Docker Hub) is off.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { readdir, readFile } from "node:fs/promises";
import { join } from "node:path";
import type { CoreV1Api } from "@kubernetes/client-node";
import { RunnerClient } from "../../src/client/index.ts";
import type { SimulatedCluster } from "../../src/sim/index.ts";
import { freePort } from "../../test/support/ports.ts";
import { GiveUp, waitFor } from "../../test/support/wait.ts";
import { distinctResidentBytes } from "./resident-pages.ts";

export const REFERENCE_SESSION_NAMESPACE = "telo-ref-sessions";
export const REFERENCE_BUILD_NAMESPACE = "telo-ref-builds";

export type ReferenceRunner = {
  client: RunnerClient;
  baseUrl: string;
  pid: number;
  stderrText(): string;
  close(): Promise<void>;
};

/** Where the built reference is and how to start it: REFERENCE_RUNNER_DIR, REFERENCE_RUNNER_COMMAND. */
export function referenceCommand(dirArgument?: string): { dir: string; argv: string[] } {
  const dir = dirArgument ?? process.env.REFERENCE_RUNNER_DIR;
  if (!dir) {
    throw new Error(
      "no reference runner: set REFERENCE_RUNNER_DIR (or --reference-dir) to a built apps/k8s-runner of the telorun/telo repository; docs/benchmarks.md says how to prepare one",
    );
  }
  const argv = (process.env.REFERENCE_RUNNER_COMMAND ?? "node dist/server.js").split(" ").filter(Boolean);
  // The same Node as ours, whichever `node` is first on PATH.
  if (argv[0] === "node") argv[0] = process.execPath;
  return { dir, argv };
}

/** Its two namespaces, labelled as its Helm chart labels them (restricted sessions, baseline builds). */
export async function layOutReferenceNamespaces(core: CoreV1Api): Promise<void> {
  for (const [name, level] of [[REFERENCE_SESSION_NAMESPACE, "restricted"], [REFERENCE_BUILD_NAMESPACE, "baseline"]] as const) {
    await core.createNamespace({ body: { metadata: { name, labels: { "pod-security.kubernetes.io/enforce": level } } } });
  }
}

/** A registry that holds every image: 200 to each manifest HEAD/GET, 404 to anything else. */
export async function startManifestStub(): Promise<{ url: string; close(): Promise<void> }> {
  const server = createServer((req, res) => {
    const manifest = /^\/v2\/.+\/manifests\/[^/]+$/.test(req.url?.split("?")[0] ?? "");
    res.writeHead(manifest ? 200 : 404, manifest ? { "content-type": "application/vnd.oci.image.manifest.v1+json" } : {});
    res.end();
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

export async function startReferenceRunner(options: {
  cluster: SimulatedCluster;
  registryUrl: string;
  dir?: string;
  env?: Record<string, string>;
}): Promise<ReferenceRunner> {
  const { dir, argv } = referenceCommand(options.dir);
  const port = await freePort();
  const baseUrl = `http://127.0.0.1:${port}`;
  const env = {
    PATH: process.env.PATH ?? "",
    HOME: process.env.HOME ?? "/tmp",
    KUBECONFIG: options.cluster.kubeconfigPath,
    PORT: String(port),
    LOG_LEVEL: process.env.BENCH_LOG_LEVEL ?? "warn",
    RUNNER_SELF_URL: baseUrl,
    RUNNER_SESSION_NAMESPACE: REFERENCE_SESSION_NAMESPACE,
    RUNNER_BUILD_NAMESPACE: REFERENCE_BUILD_NAMESPACE,
    RUNNER_IMAGE_REPOSITORY: `${options.registryUrl.replace(/^https?:\/\//, "")}/telo-sessions`,
    RUNNER_REGISTRY_API_URL: options.registryUrl,
    RUNNER_REGISTRY_INSECURE: "true",
    RUNNER_BASE_IMAGE_CATALOG_ENABLED: "false",
    RUNNER_MAX_SESSIONS: "10000",
    ...options.env,
  };
  const child: ChildProcess = spawn(argv[0]!, argv.slice(1), { cwd: dir, env, stdio: ["ignore", "pipe", "pipe"] });
  let stderr = "";
  const keep = (chunk: Buffer) => {
    stderr = (stderr + chunk.toString()).slice(-8192);
    if (process.env.BENCH_VERBOSE) process.stderr.write(chunk);
  };
  child.stderr?.on("data", keep);
  // Its logger writes to stdout: kept as its stderr is, so a failure can say why.
  child.stdout?.on("data", keep);
  const close = async () => {
    if (child.exitCode !== null || child.signalCode !== null) return;
    const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
    // Its SIGTERM stops every session it holds; a bench that already stopped them waits little.
    child.kill("SIGTERM");
    const timer = setTimeout(() => child.kill("SIGKILL"), 15_000);
    await exited;
    clearTimeout(timer);
  };
  try {
    await waitFor("the reference runner's /v1/health", async () => {
      if (child.exitCode !== null) throw new GiveUp(`reference runner exited (${child.exitCode}): ${stderr}`);
      return (await fetch(`${baseUrl}/v1/health`)).ok || undefined;
    }, 30_000);
  } catch (error) {
    await close();
    throw error;
  }
  return { client: new RunnerClient(baseUrl), baseUrl, pid: child.pid!, stderrText: () => stderr, close };
}

/** `pids` and every process descending from them. */
async function processTree(pids: number[]): Promise<Set<number>> {
  const parents = new Map<number, number>();
  for (const entry of await readdir("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = await readFile(join("/proc", entry, "stat"), "utf8");
      const ppid = Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1]);
      parents.set(Number(entry), ppid);
    } catch {
      // gone meanwhile
    }
  }
  const all = new Set(pids);
  for (let grew = true; grew; ) {
    grew = false;
    for (const [pid, ppid] of parents) {
      if (all.has(ppid) && !all.has(pid)) {
        all.add(pid);
        grew = true;
      }
    }
  }
  return all;
}

/**
 * The memory of `pids` and their descendants: VmRSS summed (bytes), and the distinct physical
 * pages they hold (resident-pages.ts; undefined where the kernel hides frame numbers).
 */
export async function treeMemory(pids: number[]): Promise<{ rss: number; distinct: number | undefined }> {
  const all = await processTree(pids);
  let rss = 0;
  for (const pid of all) {
    const status = await readFile(`/proc/${pid}/status`, "utf8").catch(() => "");
    rss += Number(/^VmRSS:\s+(\d+)\s+kB$/m.exec(status)?.[1] ?? 0) * 1024;
  }
  return { rss, distinct: await distinctResidentBytes(all) };
}
