/**
 * Several replicas for the replica sections (docs/replicas.md): each an api and a supervisor of
 * its own beside one simulated cluster, at the default Lease timing and shard count; and the
 * wait until every shard is held where rendezvous hashing puts it among the replicas named.
 */
import { CoordinationV1Api } from "@kubernetes/client-node";
import { assignment } from "../../src/replicas/rendezvous.ts";
import { freePort } from "../../test/support/ports.ts";
import { ticksOf } from "../../test/support/ticking-terminal.ts";
import { waitFor } from "../../test/support/wait.ts";
import { type BenchRunner, type EntryMode, SESSION_NAMESPACE, startBenchRunner } from "./runner.ts";

/** RUNNER_SHARDS' default, which the replicas here run with. */
const SHARD_COUNT = 32;

/** A replica under `identity`; `beside` is the runner whose simulated cluster it shares (none: it brings one). */
export async function startReplica(mode: EntryMode, identity: string, beside?: BenchRunner): Promise<BenchRunner> {
  const env = { RUNNER_REPLICA_ID: identity, RUNNER_PEER_LISTEN: `127.0.0.1:${await freePort()}` };
  return startBenchRunner({ mode, env, ...(beside && { beside }) });
}

/**
 * Every shard held by the replica rendezvous hashing gives it among `identities`: the shards stop
 * moving once a replica has joined or left, so a session created from here on stays where it is
 * (before that, a create can land in a shard about to move, and answer 503).
 */
export async function shardsSettled(runner: BenchRunner, identities: string[], timeoutMs = 60_000): Promise<void> {
  const leases = runner.kubeConfig.makeApiClient(CoordinationV1Api);
  const wanted = assignment(SHARD_COUNT, identities);
  await waitFor(`every shard held by its rendezvous replica among ${identities.join(", ")}`, async () => {
    const list = await leases.listNamespacedLease({ namespace: SESSION_NAMESPACE, labelSelector: "telo.run/lease-role=shard" });
    const holders = new Map(list.items.map((lease) => [Number(/-shard-(\d+)$/.exec(lease.metadata?.name ?? "")?.[1]), lease.spec?.holderIdentity]));
    return wanted.every((identity, shard) => holders.get(shard) === identity) || undefined;
  }, timeoutMs);
}

export const lastTick = (text: string) => ticksOf(text).at(-1) ?? 0;
/** How many lines were shown more than once. */
export const duplicates = (ticks: number[]) => ticks.length - new Set(ticks).size;
/** How many counter values below the last one shown were never shown. */
export const missing = (ticks: number[]) => (ticks.length === 0 ? 0 : Math.max(...ticks) - new Set(ticks).size);
