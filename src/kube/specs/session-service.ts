/**
 * The session Service (docs/kubernetes.md "Services and routes"): layer-neutral ClusterIP in front of the session pod,
 * every declared port (tcp and udp) published under its own number. Routes point at it.
 */
import type { V1Service } from "@kubernetes/client-node";
import { LABEL, serviceName, stampLabels } from "./names.ts";
import { podOwnerReference, type RouteObjectInput } from "./owner.ts";

/** A session Service is built from what its route objects are, less the base domain. */
export type ServiceInput = Omit<RouteObjectInput, "baseDomain">;

/**
 * Labelled managed-by and owner only (no session-id), so selecting by session id finds pods and routes,
 * never the Service; the selector follows the session across watch-pod recreations.
 */
export function sessionService(input: ServiceInput): V1Service {
  return {
    apiVersion: "v1",
    kind: "Service",
    metadata: {
      name: serviceName(input.sessionId),
      namespace: input.namespace,
      labels: stampLabels(input),
      ownerReferences: [podOwnerReference(input.owner)],
    },
    spec: {
      selector: { [LABEL.sessionId]: input.sessionId },
      // The name carries the protocol too: the same number may be declared for tcp and udp.
      ports: input.ports.map(({ port, protocol }) => ({
        name: protocol === "udp" ? `p${port}-udp` : `p${port}`,
        port,
        targetPort: port,
        protocol: protocol === "udp" ? "UDP" : "TCP",
      })),
    },
  };
}
