// Replica coordinators against the simulated cluster's Lease API over HTTP, on the real clock
// with a short Lease: the supervisor's work on moved shards (adopting, letting go) may take far
// longer than a renew deadline, and the renewals must go on beside it.
import { CoordinationV1Api } from "@kubernetes/client-node";
import { beforeAll, describe, expect, it } from "vitest";
import type { LeaseTiming } from "../../src/replicas/lease-rules.ts";
import { LeaseStore } from "../../src/replicas/lease-store.ts";
import { ReplicaCoordinator } from "../../src/replicas/coordinator.ts";
import type { OwnershipHooks } from "../../src/sessions/ownership-seam.ts";
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

/** A coordinator and the hooks it will be started with (the supervisor's, played by the test). */
function coordinator(identity: string, hooks: Partial<OwnershipHooks>, leases = store, timing = TIMING, tellShardsMoved: () => Promise<void> = async () => undefined) {
  const replica = new ReplicaCoordinator({
    store: leases,
    settings: { identity, peerAddress: `${identity}.peers:8065`, shardCount: SHARDS, timing },
    ownerId: "coord",
    credential: "secret",
    tellShardsMoved,
    log: createLogger("test", "silent"),
  });
  const all: OwnershipHooks = { letGo: async () => undefined, takeOver: async () => undefined, dutiesGained: async () => undefined, dutiesLost: () => undefined, ...hooks };
  return Object.assign(replica, { begin: () => replica.start(all) });
}

/** The shards a hook's selector takes, found through the ids of each shard. */
function shardsOf(replica: ReplicaCoordinator, which: (sessionId: string) => boolean): number[] {
  return idsByShard(replica).flatMap((id, shard) => (which(id) ? [shard] : []));
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
    const a = coordinator("replica-a", { takeOver: () => adoption.opened });
    const ids = idsByShard(a);
    const started = a.begin();

    // The first period acquired every shard; their sessions are being adopted.
    await waitFor("every Lease written", async () => (await renewTimes()).size === SHARDS + 2);
    const before = await renewTimes();
    await pause(TIMING.renewDeadlineMs * 2);
    const after = await renewTimes();
    for (const [name, renewed] of before) expect(after.get(name), `${name} renewed`).not.toBe(renewed);
    // Still the holder of every shard (its writes would be accepted), not yet serving them.
    for (const id of ids) expect(a.writerFor(id)).toBeDefined();
    for (const id of ids) expect(a.serves(id)).toBe(false);

    adoption.open();
    await started;
    for (const id of ids) expect(a.serves(id)).toBe(true);
    await a.leave();
  });

  it("renews a shard it is letting go until its sessions are handed off, and only then releases it to the replica that won it", async () => {
    const lettingGo = gate();
    let released: number[] = [];
    const a = coordinator("replica-a", {
      letGo: async (which) => {
        released = shardsOf(a, which);
        await lettingGo.opened;
      },
    });
    await a.begin();
    const b = coordinator("replica-b", {});
    await b.begin();
    const ids = idsByShard(a);

    // a sees b join and starts letting go of b's shards: it stops serving them at once, but holds
    // them (b waits) for as long as the hand-off takes, well past a renew deadline.
    await waitFor("a letting shards go", () => released.length > 0);
    const moving = released;
    await pause(TIMING.renewDeadlineMs * 2);
    for (const shard of moving) {
      expect(a.serves(ids[shard]!)).toBe(false);
      expect(a.writerFor(ids[shard]!)).toBeDefined();
      expect(b.writerFor(ids[shard]!)).toBeUndefined();
    }

    lettingGo.open();
    await waitFor("b serving the shards it won", () => moving.every((shard) => b.serves(ids[shard]!)));
    for (const shard of moving) expect(a.writerFor(ids[shard]!)).toBeUndefined();
    await Promise.all([a.leave(), b.leave()]);
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
    await a.begin();
    const ids = idsByShard(a);
    refuseMembers = true;
    await pause(TIMING.renewDeadlineMs * 2);
    for (const id of ids) expect(a.writerFor(id), "shard still held").toBeDefined();
    refuseMembers = false;
    await a.leave();
  });
});

describe("replica coordinators telling each other of moved shards", () => {
  it("route to the replica that took a shard as soon as it serves it, without waiting for a period to list the Leases", async () => {
    // Periods a minute apart: within this test a replica runs one only when told to (as the peer route does).
    const slow: LeaseTiming = { durationSeconds: 90, renewDeadlineMs: 80_000, retryMs: 60_000 };
    const replicas: Record<string, ReplicaCoordinator> = {};
    const tell = (to: string) => async () => void replicas[to]?.nudge();
    const first = coordinator("moved-a", {}, store, slow, tell("b"));
    replicas.a = first;
    await first.begin();
    const second = coordinator("moved-b", {}, store, slow, tell("a"));
    replicas.b = second;
    await second.begin();
    const a = replicas.a;
    const b = replicas.b;
    const ids = idsByShard(a);
    const bPlacement = b.placement();
    const bAddress = bPlacement.shared ? bPlacement.peerAddress : "";

    // a's period sees b join: a lets b's shards go and tells b, which takes them, adopts their
    // sessions and tells a, whose view then names b without a period of its own coming due.
    a.nudge();
    await waitFor("b serving the shards it won", () => ids.some((id) => b.serves(id)));
    const won = ids.flatMap((id, shard) => (b.serves(id) ? [shard] : []));
    const ownerAt = (shard: number) => {
      const placement = a.placement();
      return placement.shared ? placement.owners[shard] : undefined;
    };
    await waitFor("a routing b's shards to b", () => won.every((shard) => ownerAt(shard) === bAddress) || undefined, 5_000);
    await Promise.all([a.leave(), b.leave()]);
  });
});

