/**
 * The session Ingress (docs/kubernetes.md "Services and routes"): ONE object per session with one rule per tcp port,
 * each host `<port>-<id>.<base-domain>` routed to the session Service. UDP is never routed.
 */
import type { V1Ingress } from "@kubernetes/client-node";
import { ingressName, serviceName, sessionHost, sessionLabels } from "./names.ts";
import { podOwnerReference, type RouteObjectInput } from "./owner.ts";

export interface IngressInput extends RouteObjectInput {
  /** SESSION_INGRESS_CLASS; unset → the cluster's default class. */
  ingressClass?: string;
  /** SESSION_INGRESS_TLS_SECRET: a `kubernetes.io/tls` Secret covering `*.<base-domain>`. */
  tlsSecret?: string;
}

/**
 * The session's Ingress, or undefined when no tcp port is left to route — then the session
 * must have no Ingress at all (publishing deletes it).
 */
export function sessionIngress(input: IngressInput): V1Ingress | undefined {
  const tcpPorts = input.ports.filter((p) => p.protocol === "tcp").map((p) => p.port);
  if (tcpPorts.length === 0) return undefined;
  const hosts = tcpPorts.map((port) => sessionHost(port, input.sessionId, input.baseDomain));
  return {
    apiVersion: "networking.k8s.io/v1",
    kind: "Ingress",
    metadata: {
      name: ingressName(input.sessionId),
      namespace: input.namespace,
      labels: sessionLabels(input, input.sessionId),
      ownerReferences: [podOwnerReference(input.owner)],
    },
    spec: {
      ...(input.ingressClass && { ingressClassName: input.ingressClass }),
      ...(input.tlsSecret && { tls: [{ hosts, secretName: input.tlsSecret }] }),
      rules: tcpPorts.map((port, index) => ({
        host: hosts[index],
        http: {
          paths: [
            {
              path: "/",
              pathType: "Prefix",
              backend: { service: { name: serviceName(input.sessionId), port: { number: port } } },
            },
          ],
        },
      })),
    },
  };
}
