// Replica coordinators against the simulated cluster's Lease API over HTTP, on the real clock
// with a short Lease: the supervisor's work on moved shards (adopting, letting go) may take far
// longer than a renew deadline, and the renewals must go on beside it.
import { CoordinationV1Api } from "@kubernetes/client-node";
import { beforeAll, describe, expect, it } from "vitest";
import type { LeaseTiming } from "../../src/replicas/lease-rules.ts";
import { LeaseStore } from "../../src/replicas/lease-store.ts";
import { type CoordinatorHooks, ReplicaCoordinator } from "../../src/replicas/coordinator.ts";
import { createLogger } from "../../src/log.ts";
import { freshNamespace, useCluster } from "../sim/helpers.ts";
import { waitFor } from "../support/wait.ts";

const c = useCluster();
let store: LeaseStore;
beforeAll(async () => {
  store = new LeaseStore({ coordination: c.kc.makeApiClient(CoordinationV1Api) }, await freshNamespace(c));
});

const TIMING: LeaseTiming = { durationSeconds: 3, renewDeadlineMs: 2_000, retryMs: 300 };
const SHARDS = 4;

/** A gate the test opens: hooks wait on it as a slow apiserver or thousands of sessions would make them. */
function gate() {
  let open!: () => void;
  const opened = new Promise<void>((resolve) => (open = resolve));
  return { opened, open };
}

function coordinator(identity: string, hooks: Partial<CoordinatorHooks>, leases = store, timing = TIMING) {
  return new ReplicaCoordinator({
    store: leases,
    settings: { identity, peerAddress: `${identity}.peers:8065`, shardCount: SHARDS, timing },
    ownerId: "coord",
    credential: "secret",
    hooks: { releasing: async () => undefined, acquired: async () => undefined, dutiesGained: async () => undefined, dutiesLost: () => undefined, shardsMoved: async () => undefined, ...hooks },
    log: createLogger("test", "silent"),
  });
}

/** A session id in each shard, found by trying. */
function idsByShard(replica: ReplicaCoordinator): string[] {
  const ids: string[] = [];
  for (let n = 0; ids.filter(Boolean).length < SHARDS; n++) ids[replica.shardOf(`s-${n}`)] ??= `s-${n}`;
  return ids;
}

async function renewTimes(): Promise<Map<string, string>> {
  const leases = await store.list("app.kubernetes.io/instance=coord");
  return new Map(leases.map((lease) => [lease.metadata.name, String((lease as { spec?: { renewTime?: unknown } }).spec?.renewTime)]));
}

const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe("a replica coordinator whose supervisor is slow to move sessions", () => {
  it("keeps renewing its Leases while an adoption takes longer than the renew deadline, and serves the shards once it is done", async () => {
    const adoption = gate();
    const a = coordinator("replica-a", { acquired: () => adoption.opened });
    const ids = idsByShard(a);
    const started = a.start();

    // The first period acquired every shard; their sessions are being adopted.
    await waitFor("every Lease written", async () => (await renewTimes()).size === SHARDS + 2);
    const before = await renewTimes();
    await pause(TIMING.renewDeadlineMs * 2);
    const after = await renewTimes();
    for (const [name, renewed] of before) expect(after.get(name), `${name} renewed`).not.toBe(renewed);
    // Still the holder of every shard (its writes would be accepted), not yet serving them.
    for (const id of ids) expect(a.writerFor(id)).toBeDefined();
    for (const id of ids) expect(a.owns(id)).toBe(false);

    adoption.open();
    await started;
    for (const id of ids) expect(a.owns(id)).toBe(true);
    await a.handOver();
  });

  it("renews a shard it is letting go until its sessions are handed off, and only then releases it to the replica that won it", async () => {
    const handOff = gate();
    let released: number[] = [];
    const a = coordinator("replica-a", {
      releasing: async (shards) => {
        released = shards;
        await handOff.opened;
      },
    });
    await a.start();
    const b = coordinator("replica-b", {});
    await b.start();
    const ids = idsByShard(a);

    // a sees b join and starts letting go of b's shards: it stops serving them at once, but holds
    // them (b waits) for as long as the hand-off takes, well past a renew deadline.
    await waitFor("a letting shards go", () => released.length > 0);
    const moving = released;
    await pause(TIMING.renewDeadlineMs * 2);
    for (const shard of moving) {
      expect(a.owns(ids[shard]!)).toBe(false);
      expect(a.writerFor(ids[shard]!)).toBeDefined();
      expect(b.writerFor(ids[shard]!)).toBeUndefined();
    }

    handOff.open();
    await waitFor("b serving the shards it won", () => moving.every((shard) => b.owns(ids[shard]!)));
    for (const shard of moving) expect(a.writerFor(ids[shard]!)).toBeUndefined();
    await Promise.all([a.handOver(), b.handOver()]);
  });

  it("keeps renewing its shards while its member Lease cannot be written", async () => {
    // The same namespace's Leases, with every write of a member Lease refused once told to.
    const failing = new LeaseStore({ coordination: c.kc.makeApiClient(CoordinationV1Api) }, store.namespace);
    let refuseMembers = false;
    const replace = failing.replace.bind(failing);
    failing.replace = (current, meta, spec) => {
      if (refuseMembers && current.metadata.name.includes("-member-")) return Promise.reject(Object.assign(new Error("injected: the apiserver refused"), { code: 500 }));
      return replace(current, meta, spec);
    };
    const a = coordinator("replica-m", {}, failing);
    await a.start();
    const ids = idsByShard(a);
    refuseMembers = true;
    await pause(TIMING.renewDeadlineMs * 2);
    for (const id of ids) expect(a.writerFor(id), "shard still held").toBeDefined();
    refuseMembers = false;
    await a.handOver();
  });
});

describe("replica coordinators telling each other of moved shards", () => {
  it("route to the replica that took a shard as soon as it serves it, without waiting for a period to list the Leases", async () => {
    // Periods a minute apart: within this test a replica runs one only when told to (as the peer route does).
    const slow: LeaseTiming = { durationSeconds: 90, renewDeadlineMs: 80_000, retryMs: 60_000 };
    const replicas: Record<string, ReplicaCoordinator> = {};
    const tell = (to: string) => async () => replicas[to]?.nudge();
    replicas.a = coordinator("moved-a", { shardsMoved: tell("b") }, store, slow);
    await replicas.a.start();
    replicas.b = coordinator("moved-b", { shardsMoved: tell("a") }, store, slow);
    await replicas.b.start();
    const a = replicas.a;
    const b = replicas.b;
    const ids = idsByShard(a);
    const bAddress = b.placement().peerAddress;

    // a's period sees b join: a lets b's shards go and tells b, which takes them, adopts their
    // sessions and tells a, whose view then names b without a period of its own coming due.
    a.nudge();
    await waitFor("b serving the shards it won", () => ids.some((id) => b.owns(id)));
    const won = ids.flatMap((id, shard) => (b.owns(id) ? [shard] : []));
    await waitFor("a routing b's shards to b", () => won.every((shard) => a.placement().owners[shard] === bAddress) || undefined, 5_000);
    await Promise.all([a.handOver(), b.handOver()]);
  });
});

