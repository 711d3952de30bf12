// Two or three replicas' Lease holders in one process, against the simulated cluster's
// Kubernetes API over HTTP. Each replica has its own clock, set by the test and skewed from the
// others, so expiry is shown to be judged on the observer's clock and no step waits on real time.
import { CoordinationV1Api, CoreV1Api, type KubeConfig } from "@kubernetes/client-node";
import * as v from "valibot";
import { beforeAll, describe, expect, it } from "vitest";
import { isConflict } from "../../src/kube/status/api-error.ts";
import { FencedPodSchema, fencedDeleteOptions, fencedUpdate, writeFenced, type FencedPod, type Writer } from "../../src/kube/cluster/fencing.ts";
import { LeaseHolder } from "../../src/replicas/lease-holder.ts";
import { DEFAULT_TIMING } from "../../src/replicas/lease-rules.ts";
import { LeaseStore } from "../../src/replicas/lease-store.ts";
import { MemberDirectory, leaseNames, memberMeta } from "../../src/replicas/membership.ts";
import { assignment } from "../../src/replicas/rendezvous.ts";
import { ShardOwnership } from "../../src/replicas/shards.ts";
import { freshNamespace, pod, statusOf, useCluster } from "../sim/helpers.ts";
import { waitFor } from "../support/wait.ts";

const c = useCluster();
let kc: KubeConfig;
beforeAll(() => {
  kc = c.kc;
});

/** A clock the test moves; each replica gets its own, far apart, as unsynchronised hosts would. */
function clock(start: number) {
  const state = { at: start, now: () => state.at, advance: (ms: number) => (state.at += ms) };
  return state;
}

const meta = { labels: { "telo.run/lease-role": "duty" }, annotations: {} };

function holder(store: LeaseStore, identity: string, now: () => number, name = "k8s-runner-duties") {
  return new LeaseHolder({ store, name, identity, timing: DEFAULT_TIMING, meta, now });
}

describe("one Lease, two holders", () => {
  it("lets one acquire and renew while the other waits, then the other take over once the first stopped renewing for a lease duration on the observer's clock", async () => {
    const store = new LeaseStore({ coordination: kc.makeApiClient(CoordinationV1Api) }, await freshNamespace(c));
    const a = clock(1_000_000);
    const b = clock(9_000_000_000);
    const first = holder(store, "replica-a", a.now);
    const second = holder(store, "replica-b", b.now);

    expect(await first.step()).toEqual({ held: true, term: 0 });
    expect(await second.step()).toEqual({ held: false, holder: "replica-a" });
    a.advance(2_000);
    expect(await first.step()).toEqual({ held: true, term: 0 });
    // b sees the renew 14 s after it first looked: its 15 s count starts again from here.
    b.advance(14_000);
    expect(await second.step()).toEqual({ held: false, holder: "replica-a" });
    b.advance(14_000);
    expect(await second.step()).toEqual({ held: false, holder: "replica-a" });

    // a is paused: no renew. b, 15 s after it last saw a change, takes over with term 1.
    b.advance(1_000);
    expect(await second.step()).toEqual({ held: true, term: 1 });
    expect((await store.read("k8s-runner-duties"))?.spec).toMatchObject({ holderIdentity: "replica-b", leaseTransitions: 1 });

    // a resumes: by its own clock its renew deadline passed, so it no longer acts as holder,
    // and its renew, conditional on the Lease it last wrote, loses.
    a.advance(DEFAULT_TIMING.renewDeadlineMs);
    expect(first.holds()).toBe(false);
    expect(await first.step()).toEqual({ held: false, holder: "replica-b" });
    expect(second.holds()).toBe(true);
  });

  it("a holder paused within its renew deadline still holds by its clock, but its renew loses with 409 to the successor's write", async () => {
    const store = new LeaseStore({ coordination: kc.makeApiClient(CoordinationV1Api) }, await freshNamespace(c));
    const a = clock(0);
    const b = clock(0);
    const first = holder(store, "replica-a", a.now);
    const second = holder(store, "replica-b", b.now);
    await first.step();
    await second.step();
    b.advance(15_000);
    expect(await second.step()).toEqual({ held: true, term: 1 });
    // a's clock did not move (a whole-process pause): it believes it holds until it writes.
    expect(first.term()).toBe(0);
    expect(await first.step()).toMatchObject({ held: false });
    expect(first.holds()).toBe(false);
  });

  it("a stale release cannot undo the successor: it is conditional on the version the releaser last wrote", async () => {
    const store = new LeaseStore({ coordination: kc.makeApiClient(CoordinationV1Api) }, await freshNamespace(c));
    const a = clock(0);
    const b = clock(0);
    const first = holder(store, "replica-a", a.now);
    const second = holder(store, "replica-b", b.now);
    await first.step();
    await second.step();
    b.advance(15_000);
    await second.step();
    await first.release();
    expect((await store.read("k8s-runner-duties"))?.spec).toMatchObject({ holderIdentity: "replica-b", leaseTransitions: 1 });
    expect(await first.step()).toEqual({ held: false, holder: "replica-b" });
  });

  it("hands over on a graceful release: the successor acquires on its next step without waiting out the duration", async () => {
    const store = new LeaseStore({ coordination: kc.makeApiClient(CoordinationV1Api) }, await freshNamespace(c));
    const a = clock(50_000);
    const b = clock(70_000);
    const first = holder(store, "replica-a", a.now);
    const second = holder(store, "replica-b", b.now);
    expect(await first.step()).toEqual({ held: true, term: 0 });
    expect(await second.step()).toMatchObject({ held: false });
    await first.release();
    expect(first.holds()).toBe(false);
    // b's clock has not moved at all since it saw a holding the Lease.
    expect(await second.step()).toEqual({ held: true, term: 1 });
    const stored = await store.read("k8s-runner-duties");
    expect(stored?.spec).toMatchObject({ holderIdentity: "replica-b", leaseTransitions: 1, leaseDurationSeconds: 15 });
  });

  it("settles two simultaneous creates and two simultaneous takeovers by the apiserver: one wins, the other gets its 409 and holds nothing", async () => {
    const store = new LeaseStore({ coordination: kc.makeApiClient(CoordinationV1Api) }, await freshNamespace(c));
    const a = clock(0);
    const b = clock(0);
    const first = holder(store, "replica-a", a.now);
    const second = holder(store, "replica-b", b.now);
    const created = await Promise.all([first.step(), second.step()]);
    expect(created.filter((s) => s.held)).toHaveLength(1);
    expect(first.holds() !== second.holds()).toBe(true);

    // Both see the winner's Lease expire, and both try to take it over from the same version.
    const third = holder(store, "replica-c", a.now);
    const fourth = holder(store, "replica-d", b.now);
    await Promise.all([third.step(), fourth.step()]);
    a.advance(15_000);
    b.advance(15_000);
    const takeovers = await Promise.all([third.step(), fourth.step()]);
    expect(takeovers.filter((s) => s.held)).toEqual([{ held: true, term: 1 }]);
    expect(third.holds() !== fourth.holds()).toBe(true);
  });
});

/** One replica: its member Lease, its view of the members, its shards, on its own clock. */
function replica(store: LeaseStore, identity: string, start: number, shardCount: number) {
  const time = clock(start);
  const member = new LeaseHolder({ store, name: leaseNames("rn").member(identity), identity, timing: DEFAULT_TIMING, meta: memberMeta("rn", `${identity}.peers:8063`), now: time.now });
  const directory = new MemberDirectory(store, "rn", time.now);
  const shards = new ShardOwnership({ store, prefix: "rn", installation: "rn", identity, shardCount, timing: DEFAULT_TIMING, now: time.now });
  return {
    identity,
    time,
    member,
    directory,
    shards,
    /** Shards the plan moved away are handed off at once: released on the next tick. */
    leaving: new Set<number>(),
    async tick() {
      await member.step();
      const live = await directory.refresh();
      await shards.release([...this.leaving]);
      this.leaving.clear();
      await shards.renew();
      for (const shard of await shards.acquire(live.map((m) => m.identity), this.leaving)) this.leaving.add(shard);
    },
  };
}

type Replica = ReturnType<typeof replica>;

/** Every replica ticks once per round, each clock moving one retry period. */
async function rounds(replicas: Replica[], count: number) {
  for (let i = 0; i < count; i++) {
    for (const r of replicas) {
      r.time.advance(DEFAULT_TIMING.retryMs);
      await r.tick();
    }
  }
}

/** Shard → identity of its holder, as the replicas themselves see it. */
function holders(replicas: Replica[], shardCount: number): (string | undefined)[] {
  return Array.from({ length: shardCount }, (_, shard) => {
    const owners = replicas.filter((r) => r.shards.holdOf(shard) !== undefined).map((r) => r.identity);
    expect(owners.length).toBeLessThanOrEqual(1);
    return owners[0];
  });
}

describe("three replicas sharing shards", () => {
  const SHARDS = 8;

  it("converge on the rendezvous assignment, take a crashed replica's shards after a lease duration, and a leaving one's at once", async () => {
    const store = new LeaseStore({ coordination: kc.makeApiClient(CoordinationV1Api) }, await freshNamespace(c));
    const [a, b, cc] = [replica(store, "runner-a", 0, SHARDS), replica(store, "runner-b", 5e9, SHARDS), replica(store, "runner-c", 9e9, SHARDS)];
    await rounds([a, b, cc], 3);
    expect((await a.directory.refresh()).map((m) => m.peerAddress)).toEqual(["runner-a.peers:8063", "runner-b.peers:8063", "runner-c.peers:8063"]);
    expect(holders([a, b, cc], SHARDS)).toEqual(assignment(SHARDS, ["runner-a", "runner-b", "runner-c"]));

    // c crashes: it never ticks again. 14 s after its last renew nothing has moved.
    const terms = new Map([...a.shards.held(), ...b.shards.held(), ...cc.shards.held()]);
    const survivorsHeld = a.shards.held().size + b.shards.held().size;
    await rounds([a, b], 7);
    expect(holders([a, b], SHARDS).filter((h) => h !== undefined)).toHaveLength(survivorsHeld);
    // Two retry periods later a lease duration has passed on a's and b's clocks since each last
    // saw c's Leases change (it saw them change on every list, not only when it first wanted a
    // shard): the survivors hold c's shards, each under a term one larger than c's.
    await rounds([a, b], 2);
    expect(holders([a, b], SHARDS)).toEqual(assignment(SHARDS, ["runner-a", "runner-b"]));
    for (const [shard, term] of [...a.shards.held(), ...b.shards.held()]) {
      const before = terms.get(shard)!;
      expect(term).toBe(assignment(SHARDS, ["runner-a", "runner-b", "runner-c"])[shard] === "runner-c" ? before + 1 : before);
    }

    // b leaves gracefully: it releases its shards and removes its member Lease; a, whose clock
    // moves by one retry period only, holds every shard after its next tick or two.
    await b.shards.releaseAll();
    await b.member.remove();
    await rounds([a], 2);
    expect(holders([a, b], SHARDS)).toEqual(Array(SHARDS).fill("runner-a"));
    expect((await a.directory.refresh()).map((m) => m.identity)).toEqual(["runner-a"]);
  });
});

describe("taking a released shard", () => {
  it("takes it with one write and no read: the list of shard Leases it has just seen stands in for one", async () => {
    const store = new LeaseStore({ coordination: kc.makeApiClient(CoordinationV1Api) }, await freshNamespace(c));
    const reads: string[] = [];
    // The same store, its reads counted.
    const counted = new LeaseStore({ coordination: kc.makeApiClient(CoordinationV1Api) }, store.namespace);
    const read = counted.read.bind(counted);
    counted.read = (name: string) => {
      reads.push(name);
      return read(name);
    };
    const a = replica(store, "runner-a", 0, 4);
    const b = replica(counted, "runner-b", 5e9, 4);
    await rounds([a], 1);
    // b lists the shards every period: a holds them all, so b waits and reads nothing.
    await b.shards.renew();
    expect(await b.shards.acquire(["runner-b"])).toEqual([]);
    await a.shards.releaseAll();
    reads.length = 0;
    await b.shards.renew();
    await b.shards.acquire(["runner-b"]);
    expect(holders([b], 4)).toEqual(Array(4).fill("runner-b"));
    expect(reads).toEqual([]);
  });
});

describe("the fence on a session pod", () => {
  it("refuses the predecessor's write once the successor stamped the pod: 409 on the stale version, then the newer term on re-read", async () => {
    const ns = await freshNamespace(c);
    const core = kc.makeApiClient(CoreV1Api);
    const readPod = async () => {
      const read = await core.readNamespacedPod({ namespace: ns, name: "telo-run-f" });
      v.parse(FencedPodSchema, read);
      return read as typeof read & FencedPod;
    };
    // As the runner writes a pod: a full update of the pod as read, conditional on its version, the writer's term stamped.
    const update = (seen: Awaited<ReturnType<typeof readPod>>, writer: Writer, note?: string) =>
      core.replaceNamespacedPod({ namespace: ns, name: "telo-run-f", body: fencedUpdate(seen, writer, (copy) => note !== undefined && (copy.metadata.annotations = { ...copy.metadata.annotations, "telo.run/note": note })) });
    await core.createNamespacedPod({ namespace: ns, body: pod("telo-run-f", { annotations: { "sim.k8s-runner.dev/run-ms": "600000" } }) });
    const old: Writer = { holder: "runner-a", term: 3 };
    const successor: Writer = { holder: "runner-b", term: 4 };

    // The kubelet's status writes move the resourceVersion too: the fenced write re-reads on 409.
    expect(await writeFenced(old, readPod, (seen) => update(seen, old, "a"), isConflict)).toEqual({ written: true });
    await waitFor("the pod running and ready, when its status stops changing", async () => {
      const status = (await core.readNamespacedPod({ namespace: ns, name: "telo-run-f" })).status;
      return status?.phase === "Running" && status.containerStatuses?.every((c) => c.ready);
    });
    const seenByOld = await readPod();
    expect(await writeFenced(successor, readPod, (seen) => update(seen, successor), isConflict)).toEqual({ written: true });

    // What the predecessor read before the successor's stamp no longer writes...
    expect(await statusOf(update(seenByOld, old, "stale"))).toMatchObject({ code: 409, reason: "Conflict" });
    // ...and read again, the pod tells it a successor owns it.
    expect(await writeFenced(old, readPod, (seen) => update(seen, old, "stale"), isConflict)).toEqual({
      written: false,
      verdict: { act: false, reason: "newer-term", stamped: successor },
    });
    expect((await readPod()).metadata.annotations?.["telo.run/note"]).toBe("a");
    // A delete cannot carry a term; it carries the version the predecessor checked, and fails.
    expect(await statusOf(core.deleteNamespacedPod({ namespace: ns, name: "telo-run-f", body: fencedDeleteOptions(seenByOld) }))).toMatchObject({ code: 409, reason: "Conflict" });
    await core.readNamespacedPod({ namespace: ns, name: "telo-run-f" });
  });
});
