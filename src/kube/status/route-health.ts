/**
 * Route health verdicts (docs/kubernetes.md "Services and routes"): whether a controller has programmed a session
 * route, read from the route object's status. Route health reports; it never fails a session.
 */
import type { V1Ingress } from "@kubernetes/client-node";
import { apiReason } from "./api-error.ts";

export type RouteVerdict = { state: "pending" } | { state: "programmed" } | { state: "rejected"; reason: string };

const PENDING: RouteVerdict = { state: "pending" };
const PROGRAMMED: RouteVerdict = { state: "programmed" };

interface RouteCondition {
  type?: string;
  status?: string;
  reason?: string;
  message?: string;
}

/** The part of an HTTPRoute (any served version, read as plain JSON) the verdict reads. */
export interface HttpRouteStatusLike {
  status?: { parents?: Array<{ conditions?: RouteCondition[] }> };
}

function refusalReason(condition: RouteCondition): string {
  const reason = condition.reason || "rejected";
  return condition.message ? `${reason}: ${condition.message}` : reason;
}

/**
 * One accepting parent wins over a sibling's refusal: `Accepted=True` with `ResolvedRefs` not
 * False is programmed at once; otherwise the first refusal (`Accepted=False` or
 * `ResolvedRefs=False`) rejects; no parents yet (or a 404: pass undefined) is pending.
 */
export function httpRouteVerdict(route: HttpRouteStatusLike | undefined): RouteVerdict {
  let refusal: RouteCondition | undefined;
  for (const parent of route?.status?.parents ?? []) {
    const conditions = parent.conditions ?? [];
    const accepted = conditions.find((c) => c.type === "Accepted");
    const resolvedRefs = conditions.find((c) => c.type === "ResolvedRefs");
    if (accepted?.status === "False") {
      refusal ??= accepted;
    } else if (resolvedRefs?.status === "False") {
      refusal ??= resolvedRefs;
    } else if (accepted?.status === "True") {
      return PROGRAMMED;
    }
  }
  return refusal ? { state: "rejected", reason: refusalReason(refusal) } : PENDING;
}

/** An Ingress has no rejection signal: an address means programmed, anything else pending. */
export function ingressVerdict(ingress: V1Ingress | undefined): RouteVerdict {
  return (ingress?.status?.loadBalancer?.ingress?.length ?? 0) > 0 ? PROGRAMMED : PENDING;
}

/** The deadline reason of a still-pending Ingress host. */
export function ingressUnclaimedReason(ingressClass: string | undefined, sessionNamespace: string): string {
  const claim = ingressClass
    ? `no ingress controller claimed the session Ingress for class '${ingressClass}'.`
    : "no ingress controller claimed the session Ingress (no ingressClassName configured).";
  return `${claim} Check that an Ingress controller is installed and watching namespace '${sessionNamespace}'.`;
}

/** The deadline reason of a still-pending HTTPRoute host. */
export function httpRouteUnclaimedReason(
  gateway: { name: string; namespace: string; sectionName?: string | undefined },
  sessionNamespace: string,
): string {
  const listener = gateway.sectionName ? ` (listener '${gateway.sectionName}')` : "";
  return `no controller claimed the session HTTPRoute for Gateway '${gateway.namespace}/${gateway.name}'${listener}. Check the Gateway exists, is programmed, and that a listener admits routes from namespace '${sessionNamespace}' (spec.listeners[].allowedRoutes.namespaces).`;
}

/** Reported once when route status cannot be read (run sessions, as a terminal line). */
export function routeReadErrorLine(err: unknown): string {
  return `could not read route status: ${apiReason(err)}`;
}

/**
 * The reason a host still pending at the deadline is reported `unprogrammed` with: the last read
 * error if one is still remembered (any later verdict clears it), else the layer's unclaimed
 * reason.
 */
export function deadlineReason(rememberedReadError: unknown, unclaimedReason: string): string {
  return rememberedReadError === undefined
    ? unclaimedReason
    : `route status could not be read: ${apiReason(rememberedReadError)}`;
}
