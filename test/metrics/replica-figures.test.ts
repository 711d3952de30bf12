// The replica figures (src/metrics/replica-figures.ts) as /metrics renders them: coordinators
// in this process against the simulated cluster's Lease API, the exposition read back through
// the registry's own rendering (the api's GET /metrics renders the same way). The alerts of
// docs/monitoring.md read these series: a replica without its Lease, shards no replica serves.
import { CoordinationV1Api } from "@kubernetes/client-node";
import { beforeAll, describe, expect, it } from "vitest";
import { createLogger } from "../../src/log.ts";
import { metricsSnapshot, renderExposition } from "../../src/metrics/registry.ts";
import { ReplicaCoordinator } from "../../src/replicas/coordinator.ts";
import type { LeaseTiming } from "../../src/replicas/lease-rules.ts";
import { LeaseStore } from "../../src/replicas/lease-store.ts";
import type { OwnershipHooks } from "../../src/sessions/ownership-seam.ts";
import { freshNamespace, useCluster } from "../sim/helpers.ts";
import { parseExposition, type Sample, valueOf } from "../support/metrics.ts";
import { waitFor } from "../support/wait.ts";

const c = useCluster();
const TIMING: LeaseTiming = { durationSeconds: 3, renewDeadlineMs: 2_000, retryMs: 300 };
const SHARDS = 4;
let namespace: string;
beforeAll(async () => {
  namespace = await freshNamespace(c);
});

async function exposition(): Promise<Sample[]> {
  return parseExposition((await renderExposition([await metricsSnapshot()])).text);
}

function coordinator(identity: string, store: LeaseStore, hooks: Partial<OwnershipHooks> = {}) {
  const replica = new ReplicaCoordinator({
    store,
    settings: { identity, peerAddress: `${identity}.peers:8065`, shardCount: SHARDS, timing: TIMING },
    ownerId: "figures",
    credential: "secret",
    tellShardsMoved: async () => undefined,
    log: createLogger("test", "silent"),
  });
  const all: OwnershipHooks = { letGo: async () => undefined, takeOver: async () => undefined, dutiesGained: async () => undefined, dutiesLost: () => undefined, ...hooks };
  return Object.assign(replica, { begin: () => replica.start(all) });
}

/** A Lease store whose member Lease writes fail while `refusing` is set. */
function storeRefusingMembers(): LeaseStore & { refusing: boolean } {
  const store = Object.assign(new LeaseStore({ coordination: c.kc.makeApiClient(CoordinationV1Api) }, namespace), { refusing: false });
  const replace = store.replace.bind(store);
  store.replace = (current, meta, spec) => {
    if (store.refusing && current.metadata.name.includes("-member-")) return Promise.reject(new Error("injected: the apiserver refused"));
    return replace(current, meta, spec);
  };
  return store;
}

describe("the replica figures", () => {
  it("are absent before a coordinator runs, as with one replica, which has no Leases", async () => {
    const samples = await exposition();
    for (const name of ["runner_lease_held", "runner_shards", "runner_lease_renew_failures_total", "runner_shard_moves_total"]) {
      expect(samples.filter((sample) => sample.name === name), name).toEqual([]);
    }
  });

  it("show the Leases held, the shards served, each shard move and each failed renew", async () => {
    const store = storeRefusingMembers();
    let handedOff = 0;
    const a = coordinator("replica-a", store, {
      letGo: async (which, unhurried) => {
        if (unhurried) handedOff += ids(a).filter(which).length;
      },
    });
    await a.begin();
    let samples = await exposition();
    expect(valueOf(samples, "runner_lease_held", { lease: "member" })).toBe(1);
    expect(valueOf(samples, "runner_lease_held", { lease: "duties" })).toBe(1);
    expect(valueOf(samples, "runner_shards", { view: "served" })).toBe(SHARDS);
    expect(valueOf(samples, "runner_shards", { view: "configured" })).toBe(SHARDS);
    expect(valueOf(samples, "runner_shard_moves_total", { move: "acquired" })).toBe(SHARDS);
    // Every series starts at 0, so a rate reads from the first scrape.
    expect(samples.filter((sample) => sample.name === "runner_shard_moves_total").map((sample) => sample.labels.move).sort()).toEqual(["acquired", "handed_off", "lapsed"]);
    expect(valueOf(samples, "runner_lease_renew_failures_total", { lease: "member" })).toBe(0);

    // A fenced write refused: the shard lapses.
    a.lost(ids(a)[0]!);
    expect(valueOf(await exposition(), "runner_shard_moves_total", { move: "lapsed" })).toBe(1);

    // The member Lease refused until the hold runs out: failures counted, the Lease shown lost.
    store.refusing = true;
    await waitFor("the member Lease lost", async () => valueOf(await exposition(), "runner_lease_held", { lease: "member" }) === 0, TIMING.renewDeadlineMs * 3);
    expect(valueOf(await exposition(), "runner_lease_renew_failures_total", { lease: "member" })).toBeGreaterThan(0);
    store.refusing = false;

    // A second replica wins some shards: a hands them off (b, built last, is the census now).
    const b = coordinator("replica-b", store);
    await b.begin();
    await waitFor("shards handed off", async () => handedOff > 0 && valueOf(await exposition(), "runner_shard_moves_total", { move: "handed_off" }) === handedOff);
    await Promise.all([a.leave(), b.leave()]);
  });
});

/** A session id in each shard, found by trying. */
function ids(replica: ReplicaCoordinator): string[] {
  const found: string[] = [];
  for (let n = 0; found.filter(Boolean).length < SHARDS; n++) found[replica.shardOf(`s-${n}`)] ??= `s-${n}`;
  return found;
}
