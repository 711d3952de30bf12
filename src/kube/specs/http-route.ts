/**
 * The session HTTPRoutes of the Gateway API layer (docs/kubernetes.md "Services and routes"): ONE route PER tcp port,
 * because a single route with several hostnames would send every host to its first matching
 * rule. Each attaches to the configured Gateway and forwards to the session Service.
 */
import type { IHTTPRoute } from "@kubernetes-models/gateway-api/gateway.networking.k8s.io/v1/HTTPRoute";
import { httpRouteName, serviceName, sessionHost, sessionLabels } from "./names.ts";
import { podOwnerReference, type RouteObjectInput } from "./owner.ts";

export const GATEWAY_API_GROUP = "gateway.networking.k8s.io";

/**
 * An HTTPRoute at the Gateway API version picked at boot (docs/kubernetes.md "Services and routes": v1, else v1beta1, else the
 * group's preferred version); the fields the runner sets are the same in every version.
 */
export type SessionHttpRoute = Omit<IHTTPRoute, "apiVersion"> & { apiVersion: string };

export interface HttpRouteInput extends RouteObjectInput {
  /** The served Gateway API version, e.g. `v1`. */
  version: string;
  gateway: { name: string; namespace: string; sectionName?: string };
}

/** One route per tcp port, in port order; none when the session routes no tcp port. */
export function sessionHttpRoutes(input: HttpRouteInput): SessionHttpRoute[] {
  const parentRef = {
    group: GATEWAY_API_GROUP,
    kind: "Gateway",
    name: input.gateway.name,
    namespace: input.gateway.namespace,
    ...(input.gateway.sectionName && { sectionName: input.gateway.sectionName }),
  };
  return input.ports
    .filter((p) => p.protocol === "tcp")
    .map(({ port }) => ({
      apiVersion: `${GATEWAY_API_GROUP}/${input.version}`,
      kind: "HTTPRoute" as const,
      metadata: {
        name: httpRouteName(input.sessionId, port),
        namespace: input.namespace,
        labels: sessionLabels(input, input.sessionId),
        ownerReferences: [podOwnerReference(input.owner)],
      },
      spec: {
        parentRefs: [parentRef],
        hostnames: [sessionHost(port, input.sessionId, input.baseDomain)],
        rules: [
          {
            matches: [{ path: { type: "PathPrefix" as const, value: "/" } }],
            backendRefs: [{ name: serviceName(input.sessionId), port }],
          },
        ],
      },
    }));
}
