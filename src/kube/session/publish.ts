/**
 * Publishing a session pod's ports (docs/kubernetes.md "The engine", "Services and routes") for every session kind: the
 * Service over the ports, owned by the pod, then the routes, then route health until `signal`.
 */
import type { PortMapping, RouteEvent } from "../../contract/wire.ts";
import type { KubeContext } from "../context.ts";
import { publishService } from "../routing/publish-service.ts";

export type PublishInput = {
  sessionId: string;
  ports: PortMapping[];
  owner: { name: string; uid: string };
  /** Create-or-replace: an earlier pod of the same session (a watch session's) may have made it. */
  replace: boolean;
  signal: AbortSignal;
  onReadError?: (line: string) => void;
  /** The app a routed port belongs to; undefined for the agent's. */
  appOf(port: number): string | undefined;
  /** Every routed port's state as a `route` event. */
  onRoute(event: RouteEvent): void;
};

/** Rejects with the API error. Without a router nothing is published. */
export async function publishRoutes(ctx: KubeContext, input: PublishInput): Promise<void> {
  const router = ctx.router;
  if (!router) return;
  if (input.ports.length > 0) {
    await publishService(ctx.api, {
      sessionId: input.sessionId,
      ports: input.ports,
      owner: input.owner,
      namespace: ctx.config.sessionPods.namespace,
      managedBy: ctx.config.sessionPods.managedBy,
      ownerId: ctx.config.sessionPods.ownerId,
      replace: input.replace,
    });
  }
  // Always, even for no ports: an empty set drops the routes an earlier pod left.
  const hosts = await router.publish({ sessionId: input.sessionId, ports: input.ports, owner: input.owner });
  if (input.signal.aborted) return;
  router.watchRouteHealth(input.sessionId, hosts, input.signal, {
    ...(input.onReadError && { onReadError: input.onReadError }),
    onState: ({ host, port }, state, reason) => {
      const app = input.appOf(port);
      input.onRoute({ type: "route", ...(app !== undefined && { app }), host, port, state, ...(reason !== undefined && { reason }) });
    },
  });
}
