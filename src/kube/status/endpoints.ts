/**
 * The endpoints a session reports to its client (docs/kubernetes.md "Services and routes"). A URL is offered only when
 * a routing layer exists AND a base domain is set; otherwise the host is empty and the client
 * fills in the hostname of the runner it talks to. UDP is never routed.
 */
import type { PortMapping, RunnerEndpoint } from "../../contract/wire.ts";
import { sessionHost } from "../specs/names.ts";

export interface EndpointContext {
  sessionId: string;
  baseDomain: string | undefined;
  /** A routing layer was resolved at boot (not logs-only). */
  routed: boolean;
}

function sessionEndpoint(mapping: PortMapping, context: EndpointContext): RunnerEndpoint {
  const { port, protocol } = mapping;
  if (!context.routed || !context.baseDomain || protocol === "udp") return { host: "", port, protocol };
  const host = sessionHost(port, context.sessionId, context.baseDomain);
  return { host, port, protocol, url: `https://${host}` };
}

export function sessionEndpoints(ports: readonly PortMapping[], context: EndpointContext): RunnerEndpoint[] {
  return ports.map((mapping) => sessionEndpoint(mapping, context));
}

/** The co-resident agent's endpoint (reported as `running.agent`, never inside `endpoints`). */
export function agentEndpoint(port: number, context: EndpointContext): RunnerEndpoint {
  return sessionEndpoint({ port, protocol: "tcp" }, context);
}
