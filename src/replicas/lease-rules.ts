/**
 * The pure rules of a coordination.k8s.io Lease as the runner's replicas use it (docs/replicas.md):
 * what a Lease read from the API says, whether it is held, judged on the observer's own clock,
 * and the next spec of an acquire, a renew or a release. No I/O and no clock of their own: the
 * caller passes `now` (epoch milliseconds of its local clock).
 *
 * Expiry is judged the way client-go's leader election judges it: not by comparing the Lease's
 * `renewTime` with the local clock (the writer's clock is not ours), but by the time since this
 * observer last saw the Lease change (its resourceVersion). A holder that stops renewing is
 * expired `leaseDurationSeconds` after the observer last saw a change, however skewed the clocks.
 */
import * as v from "valibot";
import type { LeaseTiming } from "../config/replicas.ts";

/** The fields of a Lease the rules read; anything else on it is ignored. */
export const LeaseSchema = v.object({
  metadata: v.object({
    name: v.string(),
    namespace: v.optional(v.string()),
    resourceVersion: v.string(),
    labels: v.optional(v.record(v.string(), v.string())),
    annotations: v.optional(v.record(v.string(), v.string())),
  }),
  spec: v.optional(
    v.object({
      holderIdentity: v.optional(v.nullable(v.string())),
      leaseDurationSeconds: v.optional(v.nullable(v.number())),
      leaseTransitions: v.optional(v.nullable(v.number())),
      acquireTime: v.optional(v.nullable(v.string())),
      renewTime: v.optional(v.nullable(v.string())),
    }),
  ),
});
export type Lease = v.InferOutput<typeof LeaseSchema>;

/** What the rules need of a Lease, normalised: an empty holder means nobody holds it. */
export interface LeaseView {
  resourceVersion: string;
  holder: string;
  durationSeconds: number;
  /** The term: how many times the Lease changed hands. A successor's is always larger. */
  transitions: number;
  acquireTime: string | undefined;
}

export function viewOf(lease: Lease): LeaseView {
  const spec = lease.spec ?? {};
  return {
    resourceVersion: lease.metadata.resourceVersion,
    holder: spec.holderIdentity ?? "",
    durationSeconds: spec.leaseDurationSeconds ?? 0,
    transitions: spec.leaseTransitions ?? 0,
    acquireTime: spec.acquireTime ?? undefined,
  };
}

/** One observer's memory of one Lease: the version it last saw and when, on its own clock. */
export interface Observation {
  lease: LeaseView;
  observedAt: number;
}

/** The observation after reading `lease` at `now`: the clock restarts only when the Lease changed. */
export function observe(previous: Observation | undefined, lease: LeaseView, now: number): Observation {
  if (previous && previous.lease.resourceVersion === lease.resourceVersion) return { lease, observedAt: previous.observedAt };
  return { lease, observedAt: now };
}

/** When a holder that stopped renewing stops counting, on the observer's clock. */
export function expiresAt(observation: Observation): number {
  return observation.observedAt + observation.lease.durationSeconds * 1000;
}

/** Held by someone (possibly `me`) at `now`, as this observer sees it. */
export function isHeld(observation: Observation, now: number): boolean {
  return observation.lease.holder !== "" && now < expiresAt(observation);
}

/** The spec the next write of `me` carries, and what kind of write it is. */
export type Step =
  | { kind: "create"; spec: LeaseSpecOut }
  | { kind: "renew"; spec: LeaseSpecOut }
  | { kind: "takeover"; spec: LeaseSpecOut }
  | { kind: "wait"; holder: string; until: number };

/** A Lease spec as the runner writes it (MicroTimes already rendered). */
export interface LeaseSpecOut {
  holderIdentity?: string;
  leaseDurationSeconds: number;
  leaseTransitions: number;
  acquireTime: string;
  renewTime: string;
}

/**
 * metav1.MicroTime as the apiserver decodes it: RFC 3339 with exactly six fractional digits
 * (a Date's three are refused with 400).
 */
export function microTime(epochMs: number): string {
  return new Date(epochMs).toISOString().replace(/Z$/, "000Z");
}

/**
 * Acquire or renew: `observation` is undefined when the Lease does not exist. A Lease held by
 * another and not yet expired is waited on; a free or expired one is taken over with the term
 * raised by one, so every writer fenced by the term can tell the successor from its predecessor.
 */
export function nextStep(observation: Observation | undefined, me: string, durationSeconds: number, now: number): Step {
  const renewTime = microTime(now);
  if (!observation) return { kind: "create", spec: { holderIdentity: me, leaseDurationSeconds: durationSeconds, leaseTransitions: 0, acquireTime: renewTime, renewTime } };
  const current = observation.lease;
  if (current.holder === me) {
    return { kind: "renew", spec: { holderIdentity: me, leaseDurationSeconds: durationSeconds, leaseTransitions: current.transitions, acquireTime: current.acquireTime ?? renewTime, renewTime } };
  }
  if (isHeld(observation, now)) return { kind: "wait", holder: current.holder, until: expiresAt(observation) };
  return { kind: "takeover", spec: { holderIdentity: me, leaseDurationSeconds: durationSeconds, leaseTransitions: current.transitions + 1, acquireTime: renewTime, renewTime } };
}

/**
 * A graceful release: no holder, a one-second duration (as client-go writes it) and the term
 * kept, so the next holder's term is still larger than every term `me` wrote under.
 */
export function releaseSpec(current: LeaseView, now: number): LeaseSpecOut {
  const at = microTime(now);
  return { leaseDurationSeconds: 1, leaseTransitions: current.transitions, acquireTime: at, renewTime: at };
}

export type { LeaseTiming } from "../config/replicas.ts";

/** client-go's defaults, the ones Kubernetes' own controllers run with. */
export const DEFAULT_TIMING: LeaseTiming = { durationSeconds: 15, renewDeadlineMs: 10_000, retryMs: 2_000 };

/** The timing is safe only when a holder gives up before anyone else may take over. */
export function timingProblem(timing: LeaseTiming): string | undefined {
  if (!Number.isInteger(timing.durationSeconds) || timing.durationSeconds < 1) return "the lease duration must be a whole number of seconds, at least 1";
  if (timing.renewDeadlineMs >= timing.durationSeconds * 1000) return "the renew deadline must be shorter than the lease duration";
  if (timing.retryMs <= 0 || timing.retryMs >= timing.renewDeadlineMs) return "the retry period must be positive and shorter than the renew deadline";
  return undefined;
}

/** Whether `me`, whose last successful acquire or renew was at `renewedAt`, may still act as holder at `now`. */
export function stillHolds(renewedAt: number | undefined, timing: LeaseTiming, now: number): boolean {
  return renewedAt !== undefined && now - renewedAt < timing.renewDeadlineMs;
}
