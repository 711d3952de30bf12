/**
 * Shards a replica lets go are taken by the others at once, not at their next period
 * (docs/replicas.md "Duties and exit"): the releasing replica tells the live ones over the peer link. The
 * Lease timing here is long (75 s, so a 10 s retry period) and the replica leaves just after the
 * other's period ran, so the shards could move in time only by being told.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type ReplicaSet, startReplicaSet } from "../support/replica-set.ts";
import { SESSION_NAMESPACE } from "../support/kube-runner.ts";
import { waitFor } from "../support/wait.ts";

const SHARDS = 8;
const LEASE_SECONDS = 75;
const RETRY_MS = (LEASE_SECONDS * 2000) / 15;

describe("shards released by a leaving replica", () => {
  let set: ReplicaSet;

  beforeAll(async () => {
    set = await startReplicaSet(["a", "b"], { shards: SHARDS, leaseSeconds: LEASE_SECONDS, startMs: 6 * RETRY_MS });
  }, 8 * RETRY_MS);
  afterAll(() => set?.close());

  /** When b's member Lease was last renewed: b renews it at the start of every period. */
  const bRenewed = async () => {
    const list = await set.leases.listNamespacedLease({ namespace: SESSION_NAMESPACE, labelSelector: "telo.run/lease-role=member" });
    return list.items.find((lease) => lease.spec?.holderIdentity === "replica-b")?.spec?.renewTime?.valueOf();
  };

  it("are taken by the replica that stays within moments of a SIGTERM, well before its next period", async () => {
    const before = await bRenewed();
    await waitFor("b's next period", async () => ((await bRenewed()) !== before) || undefined, 2 * RETRY_MS);
    const periodRan = Date.now();
    await set.replicas.a!.stopSupervisor("SIGTERM");
    await waitFor("every shard held by b", async () => (await set.shardLeases()).every((lease) => lease?.holder === "replica-b") || undefined, 2 * RETRY_MS);
    expect(Date.now() - periodRan).toBeLessThan(RETRY_MS / 2);
  }, 4 * RETRY_MS);
});
