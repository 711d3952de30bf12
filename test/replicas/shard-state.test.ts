/**
 * A shard's life as the pure transition of src/replicas/shard-state.ts: no apiserver, no clock but
 * the numbers passed in. The pauses are what SIGSTOP, a throttled cgroup or a paused VM do to a
 * replica: its next step comes late, and must find the shard lapsed before anything else.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import type { LeaseTiming } from "../../src/replicas/lease-rules.ts";
import { FREE, type ShardObservation, type ShardState, holdsAt, servesAt, shardStep, termAt } from "../../src/replicas/shard-state.ts";

const TIMING: LeaseTiming = { durationSeconds: 15, renewDeadlineMs: 10_000, retryMs: 2_000 };

/** Steps through `observations`, each at its time; returns the last state and every effect in order. */
function run(steps: [ShardObservation, number][], from: ShardState = FREE) {
  let state = from;
  const effects: string[] = [];
  for (const [observation, now] of steps) {
    const step = shardStep(state, observation, now, TIMING);
    state = step.state;
    effects.push(...step.effects);
  }
  return { state, effects };
}

const acquired = (at = 0) => run([[{ kind: "renewed", term: 3, at }, at]]).state;
const serving = (at = 0) => run([[{ kind: "takenOver", generation: acquired(at).generation, ok: true }, at]], acquired(at)).state;

describe("a shard's state", () => {
  it("is taken over when gained, served only once taken over, and told to the others then", () => {
    const gained = run([[{ kind: "renewed", term: 3, at: 0 }, 0]]);
    expect(gained).toMatchObject({ state: { kind: "adopting", term: 3 }, effects: ["takeOver"] });
    expect(holdsAt(gained.state, 1, TIMING)).toBe(true);
    expect(servesAt(gained.state, 1, TIMING)).toBe(false);
    const done = run([[{ kind: "takenOver", generation: gained.state.generation, ok: true }, 10]], gained.state);
    expect(done).toMatchObject({ state: { kind: "serving" }, effects: ["tellMoved"] });
    expect(servesAt(done.state, 10, TIMING)).toBe(true);
    expect(termAt(done.state, 10, TIMING)).toBe(3);
  });

  it("finds its hold lapsed at the first step after a pause longer than the renew deadline, whatever that step says", () => {
    fc.assert(
      fc.property(fc.integer({ min: TIMING.renewDeadlineMs, max: 10 * 60_000 }), fc.constantFrom<ShardObservation["kind"]>("tick", "renewed", "planElsewhere", "takenOver"), (pause, kind) => {
        const state = serving(0);
        const observation: ShardObservation =
          kind === "renewed" ? { kind, term: 3, at: 0 } : kind === "takenOver" ? { kind, generation: state.generation, ok: true } : { kind } as ShardObservation;
        // Nothing is served or written at the resumed clock, before any step ran.
        expect(holdsAt(state, pause, TIMING)).toBe(false);
        expect(termAt(state, pause, TIMING)).toBeUndefined();
        const step = shardStep(state, observation, pause, TIMING);
        expect(step.effects[0]).toBe("letGo");
        expect(servesAt(step.state, pause, TIMING)).toBe(false);
      }),
    );
  });

  it("keeps holding through a pause shorter than the renew deadline", () => {
    const state = serving(0);
    expect(servesAt(state, TIMING.renewDeadlineMs - 1, TIMING)).toBe(true);
    expect(shardStep(state, { kind: "tick" }, TIMING.renewDeadlineMs - 1, TIMING)).toEqual({ state, effects: [] });
  });

  it("is taken over again once its Lease is won back after a lapse, under the new term", () => {
    const lapsed = run([[{ kind: "tick" }, 20_000]], serving(0));
    const again = run([[{ kind: "renewed", term: 5, at: 30_000 }, 30_000]], lapsed.state);
    expect(again).toMatchObject({ state: { kind: "adopting", term: 5 }, effects: ["takeOver"] });
  });

  it("leaves a planned move held until its sessions are let go, serving none meanwhile, and releases it after", () => {
    const leaving = run([[{ kind: "planElsewhere" }, 100]], serving(0));
    expect(leaving).toMatchObject({ state: { kind: "leaving" }, effects: ["letGoUnhurried"] });
    expect(servesAt(leaving.state, 200, TIMING)).toBe(false);
    expect(holdsAt(leaving.state, 200, TIMING)).toBe(true);
    const renewed = run([[{ kind: "renewed", term: 3, at: 5_000 }, 5_000]], leaving.state);
    expect(renewed.state).toMatchObject({ kind: "leaving", renewedAt: 5_000 });
    const letGone = run([[{ kind: "letGo", generation: leaving.state.generation }, 6_000]], renewed.state);
    expect(letGone.state.kind).toBe("letGone");
    expect(run([[{ kind: "released" }, 7_000]], letGone.state)).toMatchObject({ state: { kind: "free" }, effects: ["tellMoved"] });
  });

  it("does not serve a shard whose takeover ends after the shard moved on", () => {
    const adopting = acquired(0);
    const moved = run([[{ kind: "planElsewhere" }, 10]], adopting);
    const late = run([[{ kind: "takenOver", generation: adopting.generation, ok: true }, 20]], moved.state);
    expect(late.state.kind).toBe("leaving");
    expect(late.effects).toEqual([]);
  });

  it("takes a failed takeover over again at the next period", () => {
    const adopting = acquired(0);
    const failed = run([[{ kind: "takenOver", generation: adopting.generation, ok: false }, 10]], adopting);
    expect(failed.state.kind).toBe("free");
    expect(run([[{ kind: "renewed", term: 3, at: 2_000 }, 2_000]], failed.state).effects).toEqual(["takeOver"]);
  });

  it("lets its sessions go when a fenced write finds a newer owner, or when a period finds the Lease another's", () => {
    expect(run([[{ kind: "fenceLost" }, 10]], serving(0))).toMatchObject({ state: { kind: "free" }, effects: ["letGo"] });
    expect(run([[{ kind: "notHeld" }, 10]], serving(0))).toMatchObject({ state: { kind: "free" }, effects: ["letGo"] });
    // A shard being let go already is left to finish.
    const leaving = run([[{ kind: "planElsewhere" }, 10]], serving(0)).state;
    expect(run([[{ kind: "fenceLost" }, 20]], leaving)).toEqual({ state: leaving, effects: [] });
  });

  it("never holds a shard past the renew deadline of its last write, whatever it observes (property)", () => {
    const observation = fc.oneof(
      fc.constant<ShardObservation>({ kind: "tick" }),
      fc.constant<ShardObservation>({ kind: "notHeld" }),
      fc.constant<ShardObservation>({ kind: "planElsewhere" }),
      fc.constant<ShardObservation>({ kind: "released" }),
      fc.constant<ShardObservation>({ kind: "fenceLost" }),
      fc.integer({ min: 0, max: 5 }).map<ShardObservation>((generation) => ({ kind: "takenOver", generation, ok: true })),
      fc.integer({ min: 0, max: 5 }).map<ShardObservation>((generation) => ({ kind: "letGo", generation })),
      fc.integer({ min: 0, max: 9 }).map<ShardObservation>((term) => ({ kind: "renewed", term, at: -1 })),
    );
    fc.assert(
      fc.property(fc.array(fc.tuple(observation, fc.integer({ min: 0, max: 30_000 })), { maxLength: 40 }), (steps) => {
        let state: ShardState = FREE;
        let now = 0;
        let lastWrite: number | undefined;
        for (const [seen, advance] of steps) {
          now += advance;
          const observed = seen.kind === "renewed" ? { ...seen, at: now } : seen;
          if (observed.kind === "renewed") lastWrite = now;
          state = shardStep(state, observed, now, TIMING).state;
          const withinDeadline = lastWrite !== undefined && now - lastWrite < TIMING.renewDeadlineMs;
          if (holdsAt(state, now, TIMING)) expect(withinDeadline).toBe(true);
          if (servesAt(state, now, TIMING)) expect(state.kind).toBe("serving");
        }
      }),
    );
  });
});
