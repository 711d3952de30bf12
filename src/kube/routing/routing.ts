/**
 * The routing seam (docs/kubernetes.md "Services and routes"): the routing objects of the layer chosen at boot (one
 * Ingress per session, or one HTTPRoute per tcp port) and their route health; the session
 * Service is service.ts's.
 * Everything the runner creates here is owned by the session pod, so it is never deleted on
 * stop: the garbage collector removes it with the pod. Publishing rejects with the failed call's
 * error unchanged (client-node's ApiException, or the Error of a call past its deadline), so
 * callers summarise it with `apiReason` and keep it as the cause. Route health only reports, to
 * the log: this target has no `route` events.
 */
import * as v from "valibot";
import type { KubeRunnerConfig } from "../../config/kube.ts";
import type { PortMapping } from "../../contract/wire.ts";
import type { Logger } from "../../log.ts";
import { type KubeApi, withDeadline } from "../cluster/api.ts";
import { GATEWAY_API_GROUP, sessionHttpRoutes } from "../specs/http-route.ts";
import { sessionIngress } from "../specs/ingress.ts";
import { httpRouteName, ingressName, sessionHost, sessionSelector } from "../specs/names.ts";
import type { RouteObjectInput } from "../specs/owner.ts";
import { replacementOf } from "../specs/replacement.ts";
import { httpRouteUnclaimedReason, httpRouteVerdict, ingressUnclaimedReason, ingressVerdict } from "../status/route-health.ts";
import { createOrReplace, ignoringNotFound, readOrUndefined, timed } from "./calls.ts";
import type { RoutingDecision, RoutingProbe } from "./resolution.ts";
import { readingOf, routeHealthWatcher } from "./route-health-watch.ts";
import type { PublishedHost, PublishInput, Router } from "./router.ts";

const HTTPROUTES = "httproutes";

function publishedHosts(sessionId: string, ports: readonly PortMapping[], baseDomain: string): PublishedHost[] {
  return ports.filter((p) => p.protocol === "tcp").map(({ port }) => ({ host: sessionHost(port, sessionId, baseDomain), port }));
}

/** A discovery or IngressClass answer that takes longer than this is treated as a failed probe. */
const PROBE_DEADLINE_MS = 10_000;

/**
 * What the cluster offers for routing (docs/kubernetes.md "Services and routes"), for `resolveRouting` at boot. Both probes
 * fail soft: a discovery error reads as "Gateway API not served", a list error is kept as an
 * error (never as "no IngressClass").
 */
export async function probeRoutingSupport(api: KubeApi): Promise<RoutingProbe> {
  const [groups, classes] = await Promise.allSettled([
    withDeadline(api.apis.getAPIVersions(), PROBE_DEADLINE_MS, "API-group discovery"),
    withDeadline(api.networking.listIngressClass(), PROBE_DEADLINE_MS, "listing IngressClasses"),
  ]);
  return {
    gatewayApiGroup: groups.status === "fulfilled" ? groups.value.groups.find((g) => g.name === GATEWAY_API_GROUP) : undefined,
    ingressClasses: classes.status === "fulfilled" ? { ok: true, items: classes.value.items } : { ok: false, error: classes.reason },
  };
}

/** What route health reads of an HTTPRoute (any served version); anything else reads as pending. */
const HttpRouteStatusSchema = v.looseObject({
  status: v.optional(
    v.looseObject({
      parents: v.optional(
        v.array(
          v.looseObject({
            conditions: v.optional(
              v.array(
                v.looseObject({
                  type: v.optional(v.string()),
                  status: v.optional(v.string()),
                  reason: v.optional(v.string()),
                  message: v.optional(v.string()),
                }),
              ),
            ),
          }),
        ),
      ),
    }),
  ),
});

/** The names in an HTTPRoute list; custom-object calls answer untyped JSON. */
const NamedListSchema = v.looseObject({
  items: v.array(v.looseObject({ metadata: v.looseObject({ name: v.string() }) })),
});

/** What a replace carries over from the object it replaces. */
const VersionedSchema = v.looseObject({
  metadata: v.optional(v.looseObject({ resourceVersion: v.optional(v.string()) })),
});

interface LayerContext {
  api: KubeApi;
  namespace: string;
  managedBy: string;
  ownerId: string;
  readyTimeoutMs: number;
  log: Logger;
}

/** The part of a route object's input every layer fills the same way. */
function routeObjectInput(context: LayerContext, decision: { baseDomain: string }, input: PublishInput): RouteObjectInput {
  return { ...input, namespace: context.namespace, managedBy: context.managedBy, ownerId: context.ownerId, baseDomain: decision.baseDomain };
}

type IngressDecision = Extract<RoutingDecision, { layer: "ingress" }>;
type GatewayDecision = Extract<RoutingDecision, { layer: "gateway" }>;

/** One Ingress per session, one rule per tcp port; no tcp port left → no Ingress at all. */
function ingressRouter(decision: IngressDecision, context: LayerContext): Router {
  const { api, namespace, log } = context;
  const read = (name: string) => timed(api.networking.readNamespacedIngress({ name, namespace }), `reading Ingress ${name}`);
  return {
    layer: "ingress",
    async publish({ sessionId, ports, owner }) {
      const name = ingressName(sessionId);
      const body = sessionIngress({
        ...routeObjectInput(context, decision, { sessionId, ports, owner }),
        ingressClass: decision.ingressClass,
        tlsSecret: decision.tlsSecret,
      });
      if (!body) {
        await ignoringNotFound(timed(api.networking.deleteNamespacedIngress({ name, namespace }), `deleting Ingress ${name}`));
        return [];
      }
      await createOrReplace({
        create: () => timed(api.networking.createNamespacedIngress({ namespace, body }), `creating Ingress ${name}`),
        read: () => read(name),
        replace: (existing) =>
          timed(api.networking.replaceNamespacedIngress({ name, namespace, body: replacementOf(body, existing) }), `replacing Ingress ${name}`),
      });
      return publishedHosts(sessionId, ports, decision.baseDomain);
    },
    watchRouteHealth: routeHealthWatcher({
      layer: "ingress",
      deadlineMs: context.readyTimeoutMs,
      unclaimedReason: ingressUnclaimedReason(decision.ingressClass, namespace),
      log,
      // Every host is a rule of the same Ingress: one read answers for all of them.
      async read(sessionId, pending) {
        const reading = await readingOf(async () => ingressVerdict(await readOrUndefined(read(ingressName(sessionId)))));
        return pending.map(() => reading);
      },
    }),
  };
}

/**
 * One HTTPRoute per tcp port, at the Gateway API version picked at boot; routes of ports the
 * session no longer routes are found by the session label and deleted.
 */
function gatewayRouter(decision: GatewayDecision, context: LayerContext): Router {
  const { api, namespace, log } = context;
  const at = { group: GATEWAY_API_GROUP, version: decision.version, namespace, plural: HTTPROUTES };
  const read = (name: string) => timed(api.custom.getNamespacedCustomObject({ ...at, name }), `reading HTTPRoute ${name}`);
  const remove = (name: string) =>
    ignoringNotFound(timed(api.custom.deleteNamespacedCustomObject({ ...at, name }), `deleting HTTPRoute ${name}`));
  return {
    layer: "gateway",
    async publish({ sessionId, ports, owner }) {
      const routes = sessionHttpRoutes({
        ...routeObjectInput(context, decision, { sessionId, ports, owner }),
        version: decision.version,
        gateway: decision.gateway,
      });
      // The builder names every route; the names are also the set strays are told apart from.
      const names = routes.map((route) => route.metadata!.name!);
      // Settle every route before failing, so a rejected publish leaves no call in flight.
      const published = await Promise.allSettled(
        routes.map((body, index) => {
          const name = names[index]!;
          return createOrReplace({
            create: () => timed(api.custom.createNamespacedCustomObject({ ...at, body }), `creating HTTPRoute ${name}`),
            read: async () => v.parse(VersionedSchema, await read(name)),
            replace: (existing) =>
              timed(api.custom.replaceNamespacedCustomObject({ ...at, name, body: replacementOf(body, existing) }), `replacing HTTPRoute ${name}`),
          });
        }),
      );
      const failed = published.find((result) => result.status === "rejected");
      if (failed) throw failed.reason;
      const listed = v.parse(
        NamedListSchema,
        await timed(api.custom.listNamespacedCustomObject({ ...at, labelSelector: sessionSelector(sessionId) }), "listing the session's HTTPRoutes"),
      );
      const wanted = new Set(names);
      const strays = listed.items.map((item) => item.metadata.name).filter((name) => !wanted.has(name));
      const removed = await Promise.allSettled(strays.map(remove));
      const notRemoved = removed.find((result) => result.status === "rejected");
      if (notRemoved) throw notRemoved.reason;
      return publishedHosts(sessionId, ports, decision.baseDomain);
    },
    watchRouteHealth: routeHealthWatcher({
      layer: "gateway",
      deadlineMs: context.readyTimeoutMs,
      unclaimedReason: httpRouteUnclaimedReason(decision.gateway, namespace),
      log,
      read: (sessionId, pending) =>
        Promise.all(
          pending.map(({ port }) =>
            readingOf(async () => {
              const route = await readOrUndefined(read(httpRouteName(sessionId, port)));
              const parsed = v.safeParse(HttpRouteStatusSchema, route);
              return httpRouteVerdict(parsed.success ? parsed.output : undefined);
            }),
          ),
        ),
    }),
  };
}

/**
 * The router of the layer resolved at boot, or undefined when routing is logs-only (no Service,
 * no routes, host-less endpoints). A refusal must have stopped the boot before this is called.
 */
export function createRouter(decision: RoutingDecision, api: KubeApi, config: KubeRunnerConfig, log: Logger): Router | undefined {
  if ("refusal" in decision) throw new Error(`session routing was refused at boot: ${decision.refusal}`);
  if (decision.layer === "none") return undefined;
  const context: LayerContext = {
    api,
    namespace: config.sessionPods.namespace,
    managedBy: config.sessionPods.managedBy,
    ownerId: config.sessionPods.ownerId,
    readyTimeoutMs: config.routing.readyTimeoutSeconds * 1000,
    log,
  };
  return decision.layer === "ingress" ? ingressRouter(decision, context) : gatewayRouter(decision, context);
}
