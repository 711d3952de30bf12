/**
 * The figures of a replica among several (docs/operating.md "Metrics", docs/monitoring.md): what
 * it holds, read at each scrape from the coordinator, and the shard moves and failed Lease calls,
 * counted as they happen. One replica (no RUNNER_REPLICA_ID) has no Leases: these series are then
 * absent rather than 0, so an alert on a replica without its Lease never fires there.
 */
import { Counter, Gauge } from "prom-client";
import { registry } from "./registry.ts";

const registers = [registry];

/** What the coordinator holds now, as this replica judges it. */
export type ReplicaCensus = () => { member: boolean; duties: boolean; shardsServed: number; shards: number };

let census: ReplicaCensus | undefined;

new Gauge({
  name: "runner_lease_held",
  help: "1 while this replica holds the Lease, else 0: member (its membership, renewed every retry period) or duties (the singleton housekeeping, one replica at a time).",
  labelNames: ["lease"] as const,
  registers,
  collect() {
    this.reset();
    const now = census?.();
    if (!now) return;
    this.set({ lease: "member" }, now.member ? 1 : 0);
    this.set({ lease: "duties" }, now.duties ? 1 : 0);
  },
});

new Gauge({
  name: "runner_shards",
  help: "Shards: served (by this replica now) and configured (RUNNER_SHARDS, the installation's).",
  labelNames: ["view"] as const,
  registers,
  collect() {
    this.reset();
    const now = census?.();
    if (!now) return;
    this.set({ view: "served" }, now.shardsServed);
    this.set({ view: "configured" }, now.shards);
  },
});

const LEASES = ["member", "duties"] as const;
const renewFailures = new Counter({
  name: "runner_lease_renew_failures_total",
  help: "Calls to acquire or renew this replica's member or duties Lease that failed (an error or no answer from the apiserver).",
  labelNames: ["lease"] as const,
  registers,
});

const MOVES = ["acquired", "handed_off", "lapsed"] as const;
const shardMoves = new Counter({
  name: "runner_shard_moves_total",
  help: "Shards that changed hands at this replica: acquired (their sessions taken over), handed_off (let go to the replica that won them) or lapsed (the hold ran out or a fenced write was refused).",
  labelNames: ["move"] as const,
  registers,
});

/** The coordinator, read at each scrape; its counters start at 0, so a rate reads from the first scrape. */
export function observeReplica(source: ReplicaCensus): void {
  census = source;
  for (const lease of LEASES) renewFailures.inc({ lease }, 0);
  for (const move of MOVES) shardMoves.inc({ move }, 0);
}

export function leaseRenewFailed(lease: (typeof LEASES)[number]): void {
  renewFailures.inc({ lease });
}

export function shardsMoved(move: (typeof MOVES)[number], count: number): void {
  shardMoves.inc({ move }, count);
}
