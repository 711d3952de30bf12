/**
 * Several runner replicas as processes against one cluster (the simulated one in `npm test`, the
 * real tier's in `npm run test:cluster`), for the replica tests: each with its identity and peer
 * listener, few shards and a short lease so that takeovers fit a test, started one beside the
 * other until every shard is held and every replica holds some; the shard Leases read back.
 */
import { CoordinationV1Api } from "@kubernetes/client-node";
import { LABEL } from "../../src/kube/specs/names.ts";
import { type ClusterRunner, SESSION_NAMESPACE, startClusterRunner } from "./kube-runner.ts";
import { freePort } from "./ports.ts";
import { waitFor } from "./wait.ts";

export type ShardLease = { holder: string; term: number };

export type ReplicaSet = {
  /** By the names given, in start order; the first one's cluster is the one the others share. */
  replicas: Record<string, ClusterRunner>;
  leases: CoordinationV1Api;
  /** Each shard Lease's holder and term, by shard; undefined for a shard no replica holds. */
  shardLeases(): Promise<(ShardLease | undefined)[]>;
  /** A replica more, beside the others (a scale-up, the new pod of a rolling update); resolves once it holds a shard. */
  join(name: string): Promise<ClusterRunner>;
  /** A replica's two processes ended with SIGTERM, as a pod's deletion ends them (its cluster stays up). */
  leave(name: string): Promise<void>;
  /** Every replica closed, the first last, and the session pods they left deleted. */
  close(): Promise<void>;
};

/**
 * A replica's variables. An IPv6 one listens on every address and advertises its loopback
 * address unbracketed, as `$(POD_IP):8065` in k8s/base gives it on an IPv6 pod network.
 */
async function replicaEnv(identity: string, shards: number, leaseSeconds: number, ipv6: boolean): Promise<Record<string, string>> {
  const port = await freePort();
  return {
    RUNNER_REPLICA_ID: `replica-${identity}`,
    ...(ipv6 ? { RUNNER_PEER_LISTEN: `[::]:${port}`, RUNNER_PEER_ADVERTISE: `::1:${port}` } : { RUNNER_PEER_LISTEN: `127.0.0.1:${port}` }),
    RUNNER_SHARDS: String(shards),
    RUNNER_LEASE_DURATION_SECONDS: String(leaseSeconds),
  };
}

export async function startReplicaSet(
  names: string[],
  options: {
    shards: number;
    leaseSeconds: number;
    startMs: number;
    /** Replicas reached over IPv6. */
    ipv6?: string[];
    /** More variables, the same for every replica (RUNNER_WARM_POOL_SIZE). */
    env?: Record<string, string>;
    /** Each replica's api hands its own pod's terminals to its supervisor (startKubeRunner's `handoff`). */
    handoff?: boolean;
  },
): Promise<ReplicaSet> {
  const replicas: Record<string, ClusterRunner> = {};
  const first = () => replicas[names[0]!];
  const start = async (name: string) => {
    const env = { ...(await replicaEnv(name, options.shards, options.leaseSeconds, options.ipv6?.includes(name) ?? false)), ...options.env };
    replicas[name] = await startClusterRunner(first() ? { env, beside: first()!, handoff: options.handoff } : { env, handoff: options.handoff });
    return replicas[name]!;
  };
  const joined: string[] = [];
  let leases: CoordinationV1Api | undefined;
  const set: ReplicaSet = {
    replicas,
    get leases() {
      return (leases ??= first()!.kubeConfig.makeApiClient(CoordinationV1Api));
    },
    async shardLeases() {
      const list = await set.leases.listNamespacedLease({ namespace: SESSION_NAMESPACE, labelSelector: "telo.run/lease-role=shard" });
      const byName = new Map(list.items.map((lease) => [lease.metadata?.name, lease.spec]));
      return Array.from({ length: options.shards }, (_, shard) => {
        const spec = byName.get(`telo-runner-default-shard-${shard}`);
        return spec?.holderIdentity ? { holder: spec.holderIdentity, term: spec.leaseTransitions ?? 0 } : undefined;
      });
    },
    async join(name) {
      const replica = await start(name);
      joined.push(name);
      await waitFor(`replica-${name} holding a shard`, async () => (await set.shardLeases()).some((lease) => lease?.holder === `replica-${name}`) || undefined, options.startMs);
      return replica;
    },
    async leave(name) {
      const replica = replicas[name];
      await Promise.all([replica?.stopApi("SIGTERM"), replica?.stopSupervisor("SIGTERM")]);
    },
    async close() {
      for (const name of [...names.slice(1), ...joined].reverse()) await replicas[name]?.close();
      await first()?.core.deleteCollectionNamespacedPod({ namespace: SESSION_NAMESPACE, labelSelector: `${LABEL.managedBy}=telo-k8s-runner`, gracePeriodSeconds: 0 });
      await first()?.close();
    },
  };
  try {
    for (const name of names) await start(name);
    await waitFor(`every shard held, by all ${names.length} replicas`, async () => {
      const holders = (await set.shardLeases()).map((lease) => lease?.holder);
      return (holders.every(Boolean) && new Set(holders).size === names.length) || undefined;
    }, options.startMs);
  } catch (error) {
    // Nothing a failed start made is left running for the next file.
    await set.close().catch(() => undefined);
    throw error;
  }
  return set;
}
