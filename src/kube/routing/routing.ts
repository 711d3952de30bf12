/**
 * The routing seam (kubernetes.md §6): the session Service, the routing objects of the layer
 * chosen at boot (one Ingress per session, or one HTTPRoute per tcp port) and route health.
 * Everything the runner creates here is owned by the session pod, so it is never deleted on
 * stop: the garbage collector removes it with the pod. Publishing rejects with the failed call's
 * error unchanged (client-node's ApiException, or the Error of a call past its deadline), so
 * callers summarise it with `apiReason` and keep it as the cause. Route health only reports, to
 * the log: this target has no `route` events.
 */
import { setTimeout as sleep } from "node:timers/promises";
import * as v from "valibot";
import type { KubeRunnerConfig } from "../../config/kube.ts";
import type { PortMapping } from "../../contract/wire.ts";
import type { Logger } from "../../log.ts";
import { type KubeApi, withDeadline } from "../api.ts";
import type { RoutingDecision, RoutingProbe } from "./resolution.ts";
import { GATEWAY_API_GROUP, sessionHttpRoutes } from "../specs/http-route.ts";
import { sessionIngress } from "../specs/ingress.ts";
import { httpRouteName, ingressName, serviceName, sessionHost, sessionSelector } from "../specs/names.ts";
import type { OwnerPod } from "../specs/owner.ts";
import { replacementOf, serviceReplacement } from "../specs/replacement.ts";
import { sessionService } from "../specs/service.ts";
import { isConflict, isNotFound } from "../status/api-error.ts";
import {
  deadlineReason,
  httpRouteUnclaimedReason,
  httpRouteVerdict,
  ingressUnclaimedReason,
  ingressVerdict,
  routeReadErrorLine,
  type RouteVerdict,
} from "../status/route-health.ts";

/** A routed tcp port and its public host. */
export interface PublishedHost {
  host: string;
  port: number;
}

export interface PublishInput {
  sessionId: string;
  /** Every routed port of the session; udp ports get no route. */
  ports: readonly PortMapping[];
  /** The session's current pod. */
  owner: OwnerPod;
}

export interface Router {
  layer: "ingress" | "gateway";
  /** Create-or-replace the session's routing objects for exactly `ports`; one host per tcp port, in order. */
  publish(input: PublishInput): Promise<PublishedHost[]>;
  /** Polls until every host is settled, the route-ready deadline passes, or `signal` aborts; reports to the log. */
  /**
   * Follows route health to the log; `onReadError` also hears the first read error's line
   * (run sessions write it to the terminal, kubernetes.md §2.6).
   */
  watchRouteHealth(sessionId: string, hosts: PublishedHost[], signal: AbortSignal, onReadError?: (line: string) => void): void;
}

/**
 * The typed calls have no timeout of their own; a hung API server must not hang a session start,
 * a reload or a route-health poll (the call itself is not cancelled).
 */
const CALL_DEADLINE_MS = 10_000;
const POLL_INTERVAL_MS = 2000;
/** Rounds of create → read → replace before a create-or-replace gives up (see createOrReplace). */
const REPLACE_ROUNDS = 3;
const HTTPROUTES = "httproutes";

function timed<T>(call: Promise<T>, what: string): Promise<T> {
  return withDeadline(call, CALL_DEADLINE_MS, what);
}

async function ignoringNotFound(call: Promise<unknown>): Promise<void> {
  try {
    await call;
  } catch (err) {
    if (!isNotFound(err)) throw err;
  }
}

async function readOrUndefined<T>(call: Promise<T>): Promise<T | undefined> {
  try {
    return await call;
  } catch (err) {
    if (isNotFound(err)) return undefined;
    throw err;
  }
}

/**
 * Create; on 409 read the existing object and replace it (`replace` carries over what must be
 * kept). The object can vanish between create and read (the garbage collector removing it with
 * a previous pod), and a replace can meet a newer resourceVersion (a controller writing its
 * status): both start the round over, a bounded number of times; every other error propagates.
 */
async function createOrReplace<T>(ops: {
  create(): Promise<unknown>;
  read(): Promise<T>;
  replace(existing: T): Promise<unknown>;
}): Promise<void> {
  for (let round = 1; ; round++) {
    try {
      await ops.create();
      return;
    } catch (err) {
      if (!isConflict(err)) throw err;
    }
    try {
      await ops.replace(await ops.read());
      return;
    } catch (err) {
      if (round >= REPLACE_ROUNDS || !(isNotFound(err) || isConflict(err))) throw err;
    }
  }
}

function publishedHosts(sessionId: string, ports: readonly PortMapping[], baseDomain: string): PublishedHost[] {
  return ports.filter((p) => p.protocol === "tcp").map(({ port }) => ({ host: sessionHost(port, sessionId, baseDomain), port }));
}

export interface ServicePublishInput {
  sessionId: string;
  /** Every port of the session, tcp and udp: all apps' ports plus the agent's. */
  ports: readonly PortMapping[];
  owner: OwnerPod;
  namespace: string;
  managedBy: string;
  /**
   * Watch sessions re-publish over a Service an earlier pod may have created: create-or-replace,
   * keeping the existing resourceVersion and clusterIP(s). Run sessions create it plainly.
   */
  replace: boolean;
}

/** The session Service (§4.6, §6.2); call it only with at least one port. */
export async function publishService(api: KubeApi, input: ServicePublishInput): Promise<void> {
  const { namespace } = input;
  const name = serviceName(input.sessionId);
  const body = sessionService(input);
  const create = () => timed(api.core.createNamespacedService({ namespace, body }), `creating Service ${name}`);
  if (!input.replace) {
    await create();
    return;
  }
  await createOrReplace({
    create,
    read: () => timed(api.core.readNamespacedService({ name, namespace }), `reading Service ${name}`),
    replace: (existing) =>
      timed(api.core.replaceNamespacedService({ name, namespace, body: serviceReplacement(body, existing) }), `replacing Service ${name}`),
  });
}

/** A discovery or IngressClass answer that takes longer than this is treated as a failed probe. */
const PROBE_DEADLINE_MS = 10_000;

/**
 * What the cluster offers for routing (§6.1 step 3), for `resolveRouting` at boot. Both probes
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

/** What one status read found for a host: a verdict, or an error (which is no verdict). */
type Reading = { verdict: RouteVerdict } | { error: unknown };

interface HealthWatch {
  sessionId: string;
  layer: Router["layer"];
  hosts: PublishedHost[];
  signal: AbortSignal;
  deadlineMs: number;
  /** One reading per host, in order. */
  read(hosts: PublishedHost[]): Promise<Reading[]>;
  /** Why a host still pending at the deadline is unprogrammed, when no read error explains it. */
  unclaimedReason: string;
  log: Logger;
  onReadError: ((line: string) => void) | undefined;
}

/** False when aborted during the pause. */
function pause(ms: number, signal: AbortSignal): Promise<boolean> {
  return sleep(ms, true, { signal }).catch(() => false);
}

/**
 * §6.3: read every unsettled host now and then every 2 s. Programmed and rejected settle a host;
 * at the deadline every host still pending is unprogrammed. A read error is no verdict: the
 * first is reported once, the last is remembered as the deadline's reason unless a later verdict
 * was read, so a transient error is never blamed for a controller that simply did not answer.
 */
async function followRouteHealth(watch: HealthWatch): Promise<void> {
  const { sessionId, layer, signal, log } = watch;
  const deadline = performance.now() + watch.deadlineMs;
  let pending = watch.hosts;
  let readError: unknown;
  let readErrorReported = false;
  if (pending.length === 0 || signal.aborted) return;
  log.debug("session routes pending", { sessionId, layer, hosts: pending.map((h) => h.host) });
  while (pending.length > 0) {
    const readings = await watch.read(pending);
    if (signal.aborted) return;
    const unsettled: PublishedHost[] = [];
    pending.forEach(({ host, port }, index) => {
      const reading = readings[index]!;
      if ("error" in reading) {
        readError = reading.error;
        if (!readErrorReported) {
          const line = routeReadErrorLine(reading.error);
          log.warn(line, { sessionId, layer, host, port });
          watch.onReadError?.(line);
        }
        readErrorReported = true;
        unsettled.push({ host, port });
        return;
      }
      readError = undefined;
      const { verdict } = reading;
      if (verdict.state === "programmed") log.info("session route programmed", { sessionId, layer, host, port });
      else if (verdict.state === "rejected") log.warn("session route unprogrammed", { sessionId, layer, host, port, reason: verdict.reason });
      else unsettled.push({ host, port });
    });
    pending = unsettled;
    if (pending.length === 0) return;
    const left = deadline - performance.now();
    if (left <= 0) {
      const reason = deadlineReason(readError, watch.unclaimedReason);
      for (const { host, port } of pending) log.warn("session route unprogrammed", { sessionId, layer, host, port, reason });
      return;
    }
    if (!(await pause(Math.min(POLL_INTERVAL_MS, left), signal))) return;
  }
}

async function readingOf(read: () => Promise<RouteVerdict>): Promise<Reading> {
  try {
    return { verdict: await read() };
  } catch (error) {
    return { error };
  }
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
  readyTimeoutMs: number;
  log: Logger;
}

type IngressDecision = Extract<RoutingDecision, { layer: "ingress" }>;
type GatewayDecision = Extract<RoutingDecision, { layer: "gateway" }>;

/** One Ingress per session, one rule per tcp port; no tcp port left → no Ingress at all. */
function ingressRouter(decision: IngressDecision, context: LayerContext): Router {
  const { api, namespace, managedBy, log } = context;
  const read = (name: string) => timed(api.networking.readNamespacedIngress({ name, namespace }), `reading Ingress ${name}`);
  return {
    layer: "ingress",
    async publish({ sessionId, ports, owner }) {
      const name = ingressName(sessionId);
      const body = sessionIngress({
        sessionId,
        namespace,
        managedBy,
        owner,
        ports,
        baseDomain: decision.baseDomain,
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
    watchRouteHealth(sessionId, hosts, signal, onReadError) {
      void followRouteHealth({
        sessionId,
        layer: "ingress",
        hosts,
        signal,
        onReadError,
        deadlineMs: context.readyTimeoutMs,
        unclaimedReason: ingressUnclaimedReason(decision.ingressClass, namespace),
        log,
        // Every host is a rule of the same Ingress: one read answers for all of them.
        async read(pending) {
          const reading = await readingOf(async () => ingressVerdict(await readOrUndefined(read(ingressName(sessionId)))));
          return pending.map(() => reading);
        },
      });
    },
  };
}

/**
 * One HTTPRoute per tcp port, at the Gateway API version picked at boot; routes of ports the
 * session no longer routes are found by the session label and deleted.
 */
function gatewayRouter(decision: GatewayDecision, context: LayerContext): Router {
  const { api, namespace, managedBy, log } = context;
  const at = { group: GATEWAY_API_GROUP, version: decision.version, namespace, plural: HTTPROUTES };
  const read = (name: string) => timed(api.custom.getNamespacedCustomObject({ ...at, name }), `reading HTTPRoute ${name}`);
  const remove = (name: string) =>
    ignoringNotFound(timed(api.custom.deleteNamespacedCustomObject({ ...at, name }), `deleting HTTPRoute ${name}`));
  return {
    layer: "gateway",
    async publish({ sessionId, ports, owner }) {
      const routes = sessionHttpRoutes({
        sessionId,
        namespace,
        managedBy,
        owner,
        ports,
        baseDomain: decision.baseDomain,
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
    watchRouteHealth(sessionId, hosts, signal, onReadError) {
      void followRouteHealth({
        sessionId,
        layer: "gateway",
        hosts,
        signal,
        onReadError,
        deadlineMs: context.readyTimeoutMs,
        unclaimedReason: httpRouteUnclaimedReason(decision.gateway, namespace),
        log,
        read: (pending) =>
          Promise.all(
            pending.map(({ port }) =>
              readingOf(async () => {
                const route = await readOrUndefined(read(httpRouteName(sessionId, port)));
                const parsed = v.safeParse(HttpRouteStatusSchema, route);
                return httpRouteVerdict(parsed.success ? parsed.output : undefined);
              }),
            ),
          ),
      });
    },
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
    readyTimeoutMs: config.routing.readyTimeoutSeconds * 1000,
    log,
  };
  return decision.layer === "ingress" ? ingressRouter(decision, context) : gatewayRouter(decision, context);
}
