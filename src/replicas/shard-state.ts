/**
 * One shard's life in this replica (docs/replicas.md "A shard's life"), as a pure transition:
 * (state, observation, monotonic time) → (state, effects). The coordinator feeds it what its
 * periods and its queue find and carries out the effects; nothing here does I/O or reads a clock.
 *
 * A shard is this replica's only while the last successful write of its Lease, timed from before
 * the write was sent, is younger than the renew deadline: every step first judges that on the
 * time it is given, so a replica that resumes from a pause longer than the deadline finds its
 * shards lapsed at its first step, whatever its periods had meant to do.
 */
import type { LeaseTiming } from "./lease-rules.ts";

/** What this replica is doing with a shard. Every state but `free` holds the shard's Lease. */
export type ShardState =
  | { kind: "free"; generation: number }
  /** Held; its sessions being taken over (not served yet). */
  | { kind: "adopting"; generation: number; term: number; renewedAt: number }
  /** Held and taken over: its sessions are served here. */
  | { kind: "serving"; generation: number; term: number; renewedAt: number }
  /** Held, but the plan gives it to another replica: its sessions being let go, renewed meanwhile. */
  | { kind: "leaving"; generation: number; term: number; renewedAt: number }
  /** Its sessions let go: released at the next period's first round. */
  | { kind: "letGone"; generation: number; term: number; renewedAt: number };

export type ShardObservation =
  /** Nothing but the time: a lapse is found. */
  | { kind: "tick" }
  /** This replica wrote the shard's Lease (an acquire or a renew) under `term`, sent at `at`. */
  | { kind: "renewed"; term: number; at: number }
  /** A period found the Lease not this replica's (lost to another, or never held). */
  | { kind: "notHeld" }
  /** The live members' plan gives the shard to another replica. */
  | { kind: "planElsewhere" }
  /** The takeover begun in `generation` finished (ok) or failed. */
  | { kind: "takenOver"; generation: number; ok: boolean }
  /** The letting go begun in `generation` (a planned move) finished. */
  | { kind: "letGo"; generation: number }
  /** The Lease was released. */
  | { kind: "released" }
  /** A fenced pod write found one of its sessions another replica's. */
  | { kind: "fenceLost" };

export type ShardEffect =
  /** Take the shard's sessions over (then observe `takenOver` with the state's generation). */
  | "takeOver"
  /** Let the shard's sessions go now, bounded: it is no longer this replica's. */
  | "letGo"
  /** Let them go taking the time it takes (then observe `letGo`): the shard stays held meanwhile. */
  | "letGoUnhurried"
  /** Tell the other replicas the shard changed hands, so they route to its new holder at once. */
  | "tellMoved";

export type ShardStep = { state: ShardState; effects: ShardEffect[] };

export const FREE: ShardState = { kind: "free", generation: 0 };

/** Whether the shard is this replica's at `now`: held, and renewed within the deadline. */
export function holdsAt(state: ShardState, now: number, timing: LeaseTiming): boolean {
  return state.kind !== "free" && now - state.renewedAt < timing.renewDeadlineMs;
}

/** Whether the shard's sessions are served here at `now`. */
export function servesAt(state: ShardState, now: number, timing: LeaseTiming): boolean {
  return state.kind === "serving" && holdsAt(state, now, timing);
}

/** The term under which this replica writes the shard's pods at `now`, if it holds the shard. */
export function termAt(state: ShardState, now: number, timing: LeaseTiming): number | undefined {
  return state.kind !== "free" && holdsAt(state, now, timing) ? state.term : undefined;
}

const free = (state: ShardState): ShardState => ({ kind: "free", generation: state.generation + 1 });

/** A held shard whose hold has lapsed becomes free; its sessions are let go unless that is under way already. */
function lapsed(state: ShardState, now: number, timing: LeaseTiming): ShardStep | undefined {
  if (state.kind === "free" || holdsAt(state, now, timing)) return undefined;
  return { state: free(state), effects: state.kind === "adopting" || state.kind === "serving" ? ["letGo"] : [] };
}

export function shardStep(state: ShardState, observation: ShardObservation, now: number, timing: LeaseTiming): ShardStep {
  const lapse = lapsed(state, now, timing);
  const current = lapse?.state ?? state;
  const step = transition(current, observation);
  return lapse ? { state: step.state, effects: [...lapse.effects, ...step.effects] } : step;
}

function transition(state: ShardState, observation: ShardObservation): ShardStep {
  const same: ShardStep = { state, effects: [] };
  switch (observation.kind) {
    case "tick":
      return same;
    case "renewed":
      if (state.kind === "free") return { state: { kind: "adopting", generation: state.generation + 1, term: observation.term, renewedAt: observation.at }, effects: ["takeOver"] };
      return { state: { ...state, term: observation.term, renewedAt: observation.at }, effects: [] };
    case "notHeld":
      if (state.kind === "free") return same;
      return { state: free(state), effects: state.kind === "adopting" || state.kind === "serving" ? ["letGo"] : [] };
    case "planElsewhere":
      if (state.kind !== "adopting" && state.kind !== "serving") return same;
      // A bumped generation: a takeover still under way does not serve the shard when it ends.
      return { state: { ...state, kind: "leaving", generation: state.generation + 1 }, effects: ["letGoUnhurried"] };
    case "takenOver":
      if (state.kind !== "adopting" || state.generation !== observation.generation) return same;
      // A failed takeover is not served: the next period finds the shard held and takes it over again.
      return observation.ok ? { state: { ...state, kind: "serving" }, effects: ["tellMoved"] } : { state: free(state), effects: [] };
    case "letGo":
      if (state.kind !== "leaving" || state.generation !== observation.generation) return same;
      return { state: { ...state, kind: "letGone" }, effects: [] };
    case "released":
      return state.kind === "free" ? same : { state: free(state), effects: ["tellMoved"] };
    case "fenceLost":
      // A shard being let go already is left to finish; otherwise its sessions go now, and if its
      // Lease is still this replica's at the next period it is taken over again (where the newer
      // stamp refuses the pod before any write).
      if (state.kind !== "adopting" && state.kind !== "serving") return same;
      return { state: free(state), effects: ["letGo"] };
  }
}
