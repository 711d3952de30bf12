/**
 * Runner replicas (api + supervisor each, as the Deployment's two containers) as host processes
 * against the kwok control plane, authenticated as the runner's own ServiceAccount; started one
 * beside the other, then held until every shard is where rendezvous hashing puts it, so the
 * sessions created afterwards stay with the replica that admitted them.
 */
import { createWriteStream } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { CoordinationV1Api, KubeConfig } from "@kubernetes/client-node";
import { RunnerClient } from "../../src/client/index.ts";
import { assignment } from "../../src/replicas/rendezvous.ts";
import { freePort } from "../../test/support/ports.ts";
import { GiveUp, waitFor } from "../../test/support/wait.ts";
import { API_ENTRY, type Child, type EntryMode, SESSION_NAMESPACE, SUPERVISOR_ENTRY, spawnEntry, stop } from "../support/runner.ts";
import type { KwokCluster } from "./control-plane.ts";

/** Every replica process still running, killed if the bench process exits without closing them. */
const running = new Set<Child>();
process.once("exit", () => {
  for (const child of running) child.kill("SIGKILL");
});

/** RUNNER_SHARDS' default, which the replicas run with. */
export const SHARD_COUNT = 32;

export type KwokReplica = {
  identity: string;
  baseUrl: string;
  client: RunnerClient;
  apiPid: number;
  supervisorPid: number;
  /** The api's /metrics: both processes' figures. */
  metrics(): Promise<string>;
  close(): Promise<void>;
};

/** The variables every replica shares: the cluster, the images (never pulled) and the raised caps. */
function sharedEnv(cluster: KwokCluster, maxSessions: number): Record<string, string> {
  return {
    KUBECONFIG: cluster.runnerKubeconfig,
    RUNNER_SESSION_NAMESPACE: SESSION_NAMESPACE,
    RUNNER_IMAGE: "k8s-runner.local/telo-kernel:standin",
    RUNNER_INIT_IMAGE: "k8s-runner.local/busybox:1",
    RUNNER_BASE_IMAGE_CATALOG_ENABLED: "false",
    // Per replica; a replica taking over shards may hold more than its share.
    RUNNER_MAX_SESSIONS: String(maxSessions),
    // The scheduler binds a burst of thousands of pods in minutes, not seconds.
    RUNNER_START_DEADLINE_SECONDS: "1800",
    // The runner's default (15 s) unless KWOK_LEASE_SECONDS asks for another (docs/benchmarks-kwok.md).
    ...(process.env.KWOK_LEASE_SECONDS ? { RUNNER_LEASE_DURATION_SECONDS: process.env.KWOK_LEASE_SECONDS } : {}),
    // Written to the state directory's logs/ (kept with K8S_RUNNER_KWOK_KEEP_STATE=true).
    LOG_LEVEL: process.env.KWOK_LOG_LEVEL ?? "warn",
  };
}

/** The child's stderr (its JSON log lines) also into `<logDir>/<identity>-<process>.log`. */
function logTo(child: Child, logDir: string, name: string): void {
  child.stderr?.pipe(createWriteStream(join(logDir, `${name}.log`)));
}

async function startReplica(identity: string, env: Record<string, string>, mode: EntryMode, logDir: string): Promise<KwokReplica> {
  const dir = await mkdtemp(join(tmpdir(), "k8s-runner-kwok-replica-"));
  const [port, bundlePort, peerPort] = [await freePort(), await freePort(), await freePort()];
  const own = {
    ...env,
    PORT: String(port),
    RUNNER_BUNDLE_PORT: String(bundlePort),
    RUNNER_INTERNAL_SOCKET: join(dir, "supervisor.sock"),
    // Pods never fetch their bundle (kwok runs no init container), but the variable is required.
    RUNNER_SELF_URL: `http://127.0.0.1:${bundlePort}`,
    RUNNER_REPLICA_ID: identity,
    RUNNER_PEER_LISTEN: `127.0.0.1:${peerPort}`,
  };
  const baseUrl = `http://127.0.0.1:${port}`;
  const children: Child[] = [];
  const close = async () => {
    for (const child of children.reverse()) {
      await stop(child);
      running.delete(child);
    }
    await rm(dir, { recursive: true, force: true });
  };
  try {
    const supervisor = spawnEntry(SUPERVISOR_ENTRY, own, mode);
    children.push(supervisor);
    running.add(supervisor);
    logTo(supervisor, logDir, `${identity}-supervisor`);
    await waitFor(`${identity}'s bundle listener`, async () => {
      if (supervisor.exitCode !== null) throw new GiveUp(`supervisor ${identity} exited (${supervisor.exitCode}): ${supervisor.stderrText()}`);
      return (await fetch(`http://127.0.0.1:${bundlePort}/healthz`)).ok || undefined;
    }, 60_000);
    const api = spawnEntry(API_ENTRY, own, mode);
    children.push(api);
    running.add(api);
    logTo(api, logDir, `${identity}-api`);
    // An unknown session: 404 once it answers, or 503 session_moving while its shards settle.
    await waitFor(`${identity}'s api and internal socket`, async () => {
      if (api.exitCode !== null) throw new GiveUp(`api ${identity} exited (${api.exitCode}): ${api.stderrText()}`);
      const response = await fetch(`${baseUrl}/v1/sessions/none`);
      if (response.status === 404) return true;
      return response.status === 503 && ((await response.json()) as { error?: string }).error === "session_moving";
    }, 60_000);
    return {
      identity,
      baseUrl,
      client: new RunnerClient(baseUrl),
      apiPid: api.pid!,
      supervisorPid: supervisor.pid!,
      async metrics() {
        const response = await fetch(`${baseUrl}/metrics`);
        if (!response.ok) throw new Error(`${identity} /metrics answered ${response.status}`);
        return response.text();
      },
      close,
    };
  } catch (error) {
    await close();
    throw error;
  }
}

/** `count` replicas, every shard held by its rendezvous replica before this returns. */
export async function startKwokReplicas(cluster: KwokCluster, options: { count: number; maxSessions: number; mode: EntryMode }): Promise<KwokReplica[]> {
  const env = sharedEnv(cluster, options.maxSessions);
  const replicas: KwokReplica[] = [];
  try {
    for (let i = 0; i < options.count; i++) replicas.push(await startReplica(`kwok-replica-${String.fromCharCode(97 + i)}`, env, options.mode, join(cluster.stateDir, "logs")));
    await shardsSettled(cluster, replicas.map((replica) => replica.identity));
    return replicas;
  } catch (error) {
    await closeReplicas(replicas);
    throw error;
  }
}

export async function closeReplicas(replicas: KwokReplica[]): Promise<void> {
  for (const replica of [...replicas].reverse()) await replica.close();
}

async function shardsSettled(cluster: KwokCluster, identities: string[]): Promise<void> {
  const kubeConfig = new KubeConfig();
  kubeConfig.loadFromFile(cluster.adminKubeconfig);
  const leases = kubeConfig.makeApiClient(CoordinationV1Api);
  const wanted = assignment(SHARD_COUNT, identities);
  await waitFor("every shard held by its rendezvous replica", async () => {
    const list = await leases.listNamespacedLease({ namespace: SESSION_NAMESPACE, labelSelector: "telo.run/lease-role=shard" });
    const holders = new Map(list.items.map((lease) => [Number(/-shard-(\d+)$/.exec(lease.metadata?.name ?? "")?.[1]), lease.spec?.holderIdentity]));
    return wanted.every((identity, shard) => holders.get(shard) === identity) || undefined;
  }, 120_000);
}
