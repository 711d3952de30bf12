// The pure side of the replicas' Leases: expiry judged on the observer's clock, the acquire,
// renew, takeover and release transitions with the term, rendezvous hashing of shards over live
// members, the shard plan, and the fence on the pod. Properties run over generated inputs.
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { fencedUpdate, termAnnotations, mayAct, stampedTerm, TERM_ANNOTATION, TERM_HOLDER_ANNOTATION, UNSHARDED, writeFenced, type FencedPod } from "../../src/kube/cluster/fencing.ts";
import { expiresAt, isHeld, microTime, nextStep, observe, releaseSpec, stillHolds, timingProblem, DEFAULT_TIMING, type LeaseView } from "../../src/replicas/lease-rules.ts";
import { liveMembers, leaseNames } from "../../src/replicas/membership.ts";
import { assignment, ownerOf } from "../../src/replicas/rendezvous.ts";
import { shardOf } from "../../src/contract/ids.ts";
import { planShards } from "../../src/replicas/shards.ts";

const view = (over: Partial<LeaseView> = {}): LeaseView => ({ resourceVersion: "1", holder: "a", durationSeconds: 15, transitions: 0, acquireTime: undefined, ...over });
const identity = fc.stringMatching(/^[a-z][a-z0-9]{0,8}$/);
const members = fc.uniqueArray(identity, { minLength: 1, maxLength: 8 });

describe("expiry on the observer's clock", () => {
  it("restarts only when the resourceVersion changes, whatever renewTime says", () => {
    const first = observe(undefined, view(), 1_000);
    expect(observe(first, view(), 9_000).observedAt).toBe(1_000);
    expect(observe(first, view({ resourceVersion: "2" }), 9_000).observedAt).toBe(9_000);
  });

  it("counts a Lease held until its duration has passed since the last change seen", () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 1e12 }), fc.integer({ min: 1, max: 3600 }), fc.integer({ min: 0, max: 4e6 }), (seenAt, seconds, later) => {
        const observation = observe(undefined, view({ durationSeconds: seconds }), seenAt);
        expect(isHeld(observation, seenAt + later)).toBe(later < seconds * 1000);
        expect(expiresAt(observation)).toBe(seenAt + seconds * 1000);
      }),
    );
  });

  it("never counts a Lease without a holder as held", () => {
    expect(isHeld(observe(undefined, view({ holder: "" }), 0), 0)).toBe(false);
  });
});

describe("acquire, renew, takeover and release", () => {
  it("creates a missing Lease under term 0 with six-digit MicroTimes", () => {
    const step = nextStep(undefined, "me", 15, Date.parse("2026-12-01T20:52:39.123Z"));
    expect(step).toEqual({ kind: "create", spec: { holderIdentity: "me", leaseDurationSeconds: 15, leaseTransitions: 0, acquireTime: "2026-12-01T20:52:39.123000Z", renewTime: "2026-12-01T20:52:39.123000Z" } });
  });

  it("renews its own Lease keeping the term and acquireTime, waits on another's live one, takes over an expired one with the term raised", () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 1000 }), fc.integer({ min: 1, max: 60 }), fc.integer({ min: 0, max: 120_000 }), (term, seconds, elapsed) => {
        const acquireTime = microTime(0);
        const mine = nextStep(observe(undefined, view({ holder: "me", transitions: term, durationSeconds: seconds, acquireTime }), 0), "me", seconds, elapsed);
        expect(mine).toMatchObject({ kind: "renew", spec: { holderIdentity: "me", leaseTransitions: term, acquireTime, renewTime: microTime(elapsed) } });
        const theirs = nextStep(observe(undefined, view({ holder: "other", transitions: term, durationSeconds: seconds }), 0), "me", seconds, elapsed);
        if (elapsed < seconds * 1000) expect(theirs).toEqual({ kind: "wait", holder: "other", until: seconds * 1000 });
        else expect(theirs).toMatchObject({ kind: "takeover", spec: { holderIdentity: "me", leaseTransitions: term + 1 } });
      }),
    );
  });

  it("takes a released Lease at once, with a larger term than the releaser wrote under", () => {
    const held = view({ holder: "a", transitions: 4 });
    const released = view({ ...releaseSpec(held, 5_000), holder: "", durationSeconds: 1, transitions: releaseSpec(held, 5_000).leaseTransitions, resourceVersion: "2" });
    expect(releaseSpec(held, 5_000)).not.toHaveProperty("holderIdentity");
    expect(nextStep(observe(undefined, released, 5_001), "b", 15, 5_001)).toMatchObject({ kind: "takeover", spec: { leaseTransitions: 5 } });
  });

  it("stops acting as holder at the renew deadline, before any observer may take over", () => {
    expect(stillHolds(undefined, DEFAULT_TIMING, 0)).toBe(false);
    expect(stillHolds(0, DEFAULT_TIMING, 9_999)).toBe(true);
    expect(stillHolds(0, DEFAULT_TIMING, 10_000)).toBe(false);
    expect(timingProblem(DEFAULT_TIMING)).toBeUndefined();
    expect(timingProblem({ durationSeconds: 10, renewDeadlineMs: 10_000, retryMs: 2_000 })).toMatch(/renew deadline/);
    expect(timingProblem({ durationSeconds: 1.5, renewDeadlineMs: 1_000, retryMs: 100 })).toMatch(/whole number/);
    expect(timingProblem({ durationSeconds: 15, renewDeadlineMs: 1_000, retryMs: 1_000 })).toMatch(/retry period/);
  });
});

describe("rendezvous hashing", () => {
  it("gives every shard one owner among the members, the same whatever order they are listed in", () => {
    fc.assert(
      fc.property(members, fc.integer({ min: 0, max: 1023 }), (list, shard) => {
        const owner = ownerOf(shard, list);
        expect(list).toContain(owner);
        expect(ownerOf(shard, [...list].reverse())).toBe(owner);
      }),
    );
    expect(ownerOf(0, [])).toBeUndefined();
  });

  it("moves only the leaving member's shards when a member leaves, and only to the joining one when one joins", () => {
    fc.assert(
      fc.property(members, identity, (list, newcomer) => {
        fc.pre(!list.includes(newcomer));
        const before = assignment(64, list);
        const after = assignment(64, [...list, newcomer]);
        after.forEach((owner, shard) => expect(owner === before[shard] || owner === newcomer).toBe(true));
        const gone = list[0]!;
        const without = assignment(64, list.slice(1));
        before.forEach((owner, shard) => {
          if (owner !== gone) expect(without[shard]).toBe(owner);
        });
      }),
      { numRuns: 60 },
    );
  });

  it("spreads 64 shards over 4 members within a factor of two of even", () => {
    const counts = new Map<string, number>();
    for (const owner of assignment(64, ["runner-a", "runner-b", "runner-c", "runner-d"])) counts.set(owner!, (counts.get(owner!) ?? 0) + 1);
    expect(counts.size).toBe(4);
    for (const n of counts.values()) expect(n).toBeGreaterThanOrEqual(8);
  });

  it("puts a session in a fixed shard within range", () => {
    fc.assert(fc.property(fc.string(), fc.integer({ min: 1, max: 256 }), (id, count) => {
      const shard = shardOf(id, count);
      expect(shard).toBe(shardOf(id, count));
      expect(Number.isInteger(shard) && shard >= 0 && shard < count).toBe(true);
    }));
    expect(() => shardOf("x", 0)).toThrow(RangeError);
  });
});

describe("the shard plan", () => {
  it("has each shard wanted by exactly one of the members when they agree on the membership, and nothing released by a lone replica", () => {
    fc.assert(
      fc.property(members, (list) => {
        const wanted = list.flatMap((me) => planShards(16, me, list, new Set()).acquire);
        expect([...wanted].sort((a, b) => a - b)).toEqual(Array.from({ length: 16 }, (_, i) => i));
      }),
    );
    expect(planShards(4, "solo", [], new Set([0, 1, 2, 3]))).toEqual({ acquire: [], release: [] });
  });

  it("releases to a joining member exactly the shards it wins", () => {
    const all = new Set(Array.from({ length: 16 }, (_, i) => i));
    const plan = planShards(16, "a", ["a", "b"], all);
    expect(plan.acquire).toEqual([]);
    expect(plan.release).toEqual(assignment(16, ["a", "b"]).flatMap((owner, shard) => (owner === "b" ? [shard] : [])));
  });
});

describe("membership", () => {
  it("lists only held member Leases with an address, by identity", () => {
    const lease = (name: string, annotations: Record<string, string>) => ({ metadata: { name, resourceVersion: "1", annotations } });
    const seen = [
      { observation: observe(undefined, view({ holder: "b" }), 0), lease: lease("p-member-b", { "telo.run/peer-address": "10.0.0.2:8063" }) },
      { observation: observe(undefined, view({ holder: "a" }), 0), lease: lease("p-member-a", { "telo.run/peer-address": "10.0.0.1:8063" }) },
      { observation: observe(undefined, view({ holder: "" }), 0), lease: lease("p-member-c", { "telo.run/peer-address": "10.0.0.3:8063" }) },
      { observation: observe(undefined, view({ holder: "d" }), 0), lease: lease("p-member-d", {}) },
    ];
    expect(liveMembers(seen, 1_000)).toEqual([{ identity: "a", peerAddress: "10.0.0.1:8063" }, { identity: "b", peerAddress: "10.0.0.2:8063" }]);
    expect(liveMembers(seen, 15_000)).toEqual([]);
  });

  it("refuses an identity that cannot be part of a Lease name", () => {
    expect(leaseNames("k8s-runner").member("runner-7d9f-abcde")).toBe("k8s-runner-member-runner-7d9f-abcde");
    expect(() => leaseNames("k8s-runner").member("Runner_1")).toThrow(/DNS-1123 label/);
  });
});

describe("the fence on the pod", () => {
  const pod = (annotations?: Record<string, string>): FencedPod => ({ metadata: { name: "telo-run-x", resourceVersion: "42", ...(annotations ? { annotations } : {}) } });

  it("lets a writer act on an unstamped pod or one stamped with its own or an older term, never a newer one", () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 1e6 }), fc.integer({ min: 0, max: 1e6 }), (stamped, mine) => {
        const verdict = mayAct(pod({ [TERM_ANNOTATION]: String(stamped), [TERM_HOLDER_ANNOTATION]: stamped === mine ? "me" : "other" }), { holder: "me", term: mine });
        expect(verdict.act).toBe(stamped <= mine);
      }),
    );
    expect(mayAct(pod(), { holder: "me", term: 0 })).toEqual({ act: true });
    expect(mayAct(pod({ [TERM_ANNOTATION]: "3", [TERM_HOLDER_ANNOTATION]: "other" }), { holder: "me", term: 3 })).toMatchObject({ act: false, reason: "same-term-other-holder" });
  });

  it("reads no term from a malformed stamp", () => {
    for (const raw of ["", "-1", "01", "1e3", "x", "9".repeat(16)]) expect(stampedTerm(pod({ [TERM_ANNOTATION]: raw }))).toBeUndefined();
  });

  it("lets the only replica there is act on any pod, whatever an install of several stamped, and stamps nothing", () => {
    const alone = { holder: "", term: 0, alone: true as const };
    expect(mayAct(pod({ [TERM_ANNOTATION]: "9", [TERM_HOLDER_ANNOTATION]: "replica-x" }), alone)).toEqual({ act: true });
    expect(termAnnotations(alone)).toEqual({});
    expect(fencedUpdate(pod({ keep: "yes" }), alone).metadata.annotations).toEqual({ keep: "yes" });
  });

  it("builds an update that carries the resourceVersion read and the writer's term, leaving the input alone", () => {
    const read = pod({ keep: "yes" });
    const updated = fencedUpdate(read, { holder: "me", term: 7 }, (copy) => {
      copy.metadata.resourceVersion = "999";
      copy.metadata.annotations!.added = "1";
    });
    expect(updated.metadata).toEqual({ name: "telo-run-x", resourceVersion: "42", annotations: { keep: "yes", added: "1", [TERM_ANNOTATION]: "7", [TERM_HOLDER_ANNOTATION]: "me" } });
    expect(read.metadata.annotations).toEqual({ keep: "yes" });
  });

  it("lets the writer without a shard write only pods no replica has stamped", () => {
    expect(mayAct(pod(), UNSHARDED)).toEqual({ act: true });
    expect(mayAct(pod({ [TERM_ANNOTATION]: "0", [TERM_HOLDER_ANNOTATION]: "a" }), UNSHARDED)).toMatchObject({ act: false, reason: "newer-term" });
  });

  it("writes nothing to a pod that is gone, or when the writer has no term for the pod read", async () => {
    const writes: string[] = [];
    const write = async (seen: FencedPod) => void writes.push(seen.metadata.resourceVersion);
    const never = () => false;
    expect(await writeFenced({ holder: "me", term: 1 }, async () => undefined, write, never)).toEqual({ written: false, gone: true });
    expect(await writeFenced(() => undefined, async () => pod(), write, never)).toEqual({ written: false, notHeld: true });
    // The writer is chosen per read: a pod that became a session's between two reads is judged by that session's term.
    const reads = [pod(), pod({ [TERM_ANNOTATION]: "5", [TERM_HOLDER_ANNOTATION]: "other" })];
    const conflict = new Error("409");
    const first = async () => {
      if (writes.length === 0) {
        writes.push("lost");
        throw conflict;
      }
    };
    const result = await writeFenced((seen: FencedPod) => (stampedTerm(seen) ? { holder: "me", term: 4 } : UNSHARDED), async () => reads.shift(), first, (err) => err === conflict);
    expect(result).toMatchObject({ written: false, verdict: { reason: "newer-term", stamped: { holder: "other", term: 5 } } });
    expect(writes).toEqual(["lost"]);
  });
});
