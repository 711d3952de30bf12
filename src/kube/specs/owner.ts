/**
 * Routing objects (Service, Ingress, HTTPRoutes) are owned by the session pod so the garbage
 * collector deletes them with it; the runner never deletes them explicitly (docs/kubernetes.md "Services and routes").
 */
import type { V1OwnerReference } from "@kubernetes/client-node";
import type { PortMapping } from "../../contract/wire.ts";

/** The pod a routing object belongs to: the current pod of the session. */
export interface OwnerPod {
  name: string;
  uid: string;
}

/** What every route object of a session (its Ingress, its HTTPRoutes) is built from. */
export interface RouteObjectInput {
  sessionId: string;
  namespace: string;
  managedBy: string;
  /** RUNNER_OWNER_ID, a label; `owner` is the pod the object belongs to. */
  ownerId: string;
  owner: OwnerPod;
  ports: readonly PortMapping[];
  baseDomain: string;
}

/**
 * `blockOwnerDeletion` is deliberately unset (the reference set it to true). It only matters for
 * a foreground deletion of the pod, which the runner never asks for (it deletes with the default
 * background propagation, and the collector still removes dependents), while setting it makes
 * the API server require `update` on `pods/finalizers` from the creator — without that grant
 * every Service create would be refused with 403.
 */
export function podOwnerReference(owner: OwnerPod): V1OwnerReference {
  return { apiVersion: "v1", kind: "Pod", name: owner.name, uid: owner.uid, controller: true };
}
