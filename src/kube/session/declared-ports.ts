/**
 * What a watch app's kernel declares about its ports (docs/api.md "Debug and port events") and the `endpoints`
 * report of an accepted change (docs/kubernetes.md "Services and routes").
 */
import * as v from "valibot";
import type { DebugFrame, PortMapping } from "../../contract/wire.ts";
import { type EndpointContext, sessionEndpoints } from "../status/endpoints.ts";
import type { PortChange } from "./port-changes.ts";

const DeclaredPortsSchema = v.object({
  ports: v.array(v.looseObject({ port: v.unknown(), protocol: v.optional(v.unknown()) })),
});

/**
 * The ports a `Kernel.PortsResolved` frame declares: non-integer ports are skipped, `"udp"` is
 * udp and anything else tcp. Undefined for any other frame.
 */
export function declaredPorts(frame: DebugFrame): PortMapping[] | undefined {
  if (frame.event !== "Kernel.PortsResolved") return undefined;
  const parsed = v.safeParse(DeclaredPortsSchema, frame.payload);
  if (!parsed.success) return undefined;
  return parsed.output.ports.flatMap(({ port, protocol }) =>
    typeof port === "number" && Number.isInteger(port) && port >= 1 && port <= 65535
      ? [{ port, protocol: protocol === "udp" ? ("udp" as const) : ("tcp" as const) }]
      : [],
  );
}

/** The `endpoints` report of an accepted port change; empty lists are left out. */
export function endpointReport(change: PortChange, context: EndpointContext) {
  return {
    ...(change.added.length > 0 && { added: sessionEndpoints(change.added, context) }),
    ...(change.removed.length > 0 && { removed: sessionEndpoints(change.removed, context) }),
    ...(change.rejected.length > 0 && { rejected: change.rejected }),
  };
}
