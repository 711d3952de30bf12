// The routing seam against the simulated cluster through the real client-node: what publish
// leaves in the cluster, the Service's create and replace, the boot probe, and route health as
// the log reports it (the simulator's routing controller claims routes or leaves them alone).
import { ApiException, KubeConfig, type V1Ingress } from "@kubernetes/client-node";
import { beforeAll, describe, expect, it } from "vitest";
import { loadKubeConfig } from "../../../src/config/kube.ts";
import { kubeApi, type KubeApi } from "../../../src/kube/cluster/api.ts";
import { resolveRouting } from "../../../src/kube/routing/resolution.ts";
import { createRouter, probeRoutingSupport } from "../../../src/kube/routing/routing.ts";
import type { Router } from "../../../src/kube/routing/router.ts";
import { publishService } from "../../../src/kube/routing/publish-service.ts";
import { apiReason } from "../../../src/kube/status/api-error.ts";
import { httpRouteUnclaimedReason, ingressUnclaimedReason } from "../../../src/kube/status/route-health.ts";
import { createLogger } from "../../../src/log.ts";
import { freshNamespace, pod, useCluster } from "../../sim/helpers.ts";
import { waitFor } from "../../support/wait.ts";
import { freePort } from "../../support/ports.ts";

const c = useCluster();
const DOMAIN = "sessions.example.test";
const SESSION = "k7m3qx4r2abc";
const GROUP = "gateway.networking.k8s.io";
const CLAIMED_CLASS = "sim-nginx";

let api: KubeApi;

beforeAll(async () => {
  api = kubeApi(c.kc);
  await c.networking.createIngressClass({ body: { metadata: { name: CLAIMED_CLASS }, spec: { controller: "k8s.io/sim-nginx" } } });
});

interface LogLine {
  level: string;
  message: string;
  host?: string;
  port?: number;
  reason?: string;
}

/** A session namespace with a live owner pod, the runner config for it, and a log to read. */
async function session(env: Record<string, string> = {}) {
  const namespace = await freshNamespace(c);
  const created = await c.core.createNamespacedPod({ namespace, body: pod(`telo-run-${SESSION}`) });
  const owner = { name: created.metadata!.name!, uid: created.metadata!.uid! };
  const config = loadKubeConfig({
    RUNNER_SELF_URL: "http://runner.test:8063",
    RUNNER_SESSION_NAMESPACE: namespace,
    SESSION_ROUTING_BASE_DOMAIN: DOMAIN,
    SESSION_ROUTE_READY_TIMEOUT_SECONDS: "1",
    ...env,
  });
  const lines: LogLine[] = [];
  const log = createLogger("routing-test", "debug", (line) => {
    lines.push(JSON.parse(line) as LogLine);
    return true;
  });
  const router = async (): Promise<Router> => {
    const decision = resolveRouting(config.routing, await probeRoutingSupport(api));
    const made = createRouter(decision, api, config, log);
    if (!made) throw new Error(`no router for ${JSON.stringify(decision)}`);
    return made;
  };
  return { namespace, owner, config, lines, router };
}

const tcp = (port: number) => ({ port, protocol: "tcp" as const });
const udp = (port: number) => ({ port, protocol: "udp" as const });
const host = (port: number) => ({ host: `${port}-${SESSION}.${DOMAIN}`, port });

async function rejection(call: Promise<unknown>): Promise<unknown> {
  try {
    await call;
  } catch (err) {
    return err;
  }
  throw new Error("expected the call to fail");
}

function routes(namespace: string) {
  return {
    async names(labelSelector?: string): Promise<string[]> {
      const list = (await c.custom.listNamespacedCustomObject({ group: GROUP, version: "v1", namespace, plural: "httproutes", labelSelector })) as {
        items: { metadata: { name: string } }[];
      };
      return list.items.map((item) => item.metadata.name).sort();
    },
    get: (name: string) =>
      c.custom.getNamespacedCustomObject({ group: GROUP, version: "v1", namespace, plural: "httproutes", name }) as Promise<{
        metadata: { uid: string; resourceVersion: string; labels: Record<string, string> };
        spec: { hostnames: string[] };
        status?: unknown;
      }>,
  };
}

async function createGateway(namespace: string, name = "gw"): Promise<void> {
  await c.custom.createNamespacedCustomObject({
    group: GROUP,
    version: "v1",
    namespace,
    plural: "gateways",
    body: {
      apiVersion: `${GROUP}/v1`,
      kind: "Gateway",
      metadata: { name },
      spec: { gatewayClassName: "sim", listeners: [{ name: "http", port: 80, protocol: "HTTP" }] },
    },
  });
}

/** Route-health lines about hosts, in the order they were logged. */
function verdicts(lines: LogLine[]) {
  return lines.filter((l) => l.host !== undefined && l.level !== "debug").map((l) => [l.level, l.message, l.port, l.reason]);
}

describe("probeRoutingSupport and createRouter", () => {
  it("finds the served Gateway API group and the IngressClasses, and both decisions build a router", async () => {
    const probe = await probeRoutingSupport(api);
    expect(probe.gatewayApiGroup?.versions.map((entry) => entry.version)).toContain("v1");
    expect(probe.ingressClasses.ok && probe.ingressClasses.items.map((item) => item.metadata?.name)).toContain(CLAIMED_CLASS);

    const ingress = await session({ SESSION_ROUTING_MODE: "ingress" });
    expect((await ingress.router()).layer).toBe("ingress");
    const gateway = await session({ SESSION_ROUTING_MODE: "gateway", SESSION_GATEWAY_NAME: "gw" });
    expect((await gateway.router()).layer).toBe("gateway");
  });

  it("keeps an IngressClass list failure as an error, and fails soft when the API cannot be reached", async () => {
    c.cluster.faults.failNext({
      verb: "list",
      resource: "ingressclasses",
      code: 403,
      message: 'ingressclasses.networking.k8s.io is forbidden: User "system:serviceaccount:telo-runner:k8s-runner" cannot list resource "ingressclasses"',
    });
    const refused = await probeRoutingSupport(api);
    expect(refused.gatewayApiGroup).toBeDefined();
    expect(refused.ingressClasses.ok).toBe(false);
    if (!refused.ingressClasses.ok) {
      expect(apiReason(refused.ingressClasses.error)).toBe(
        "the runner is not permitted to do this (Forbidden, HTTP 403). The cluster operator must check the runner's RBAC.",
      );
    }

    const nowhere = new KubeConfig();
    nowhere.loadFromOptions({
      clusters: [{ name: "gone", server: `http://127.0.0.1:${await freePort()}`, skipTLSVerify: true }],
      users: [{ name: "u" }],
      contexts: [{ name: "ctx", cluster: "gone", user: "u" }],
      currentContext: "ctx",
    });
    const unreachable = await probeRoutingSupport(kubeApi(nowhere));
    expect(unreachable.gatewayApiGroup).toBeUndefined();
    expect(unreachable.ingressClasses.ok).toBe(false);
    if (!unreachable.ingressClasses.ok) expect(apiReason(unreachable.ingressClasses.error)).toBe("the Kubernetes API could not be reached");
  });

  it("has no router when routing is logs-only, and refuses a refused decision", async () => {
    const { config } = await session({ SESSION_ROUTING_MODE: "none" });
    const log = createLogger("routing-test", "silent");
    expect(createRouter(resolveRouting(config.routing), api, config, log)).toBeUndefined();
    expect(() => createRouter({ refusal: "no usable routing layer" }, api, config, log)).toThrow("no usable routing layer");
  });
});

describe("Ingress layer", () => {
  it("creates one Ingress with a rule per tcp port, replaces it in place, and deletes it when no tcp port is left", async () => {
    const { namespace, owner, router } = await session({ SESSION_ROUTING_MODE: "ingress", SESSION_INGRESS_CLASS: CLAIMED_CLASS });
    const r = await router();
    const read = () => c.networking.readNamespacedIngress({ name: `telo-run-${SESSION}`, namespace });
    const ruleHosts = (ingress: V1Ingress) => ingress.spec?.rules?.map((rule) => rule.host);

    expect(await r.publish({ sessionId: SESSION, ports: [tcp(8080), udp(5353), tcp(3000)], owner })).toEqual([host(8080), host(3000)]);
    const first = await read();
    expect(ruleHosts(first)).toEqual([host(8080).host, host(3000).host]);
    expect(first.spec?.ingressClassName).toBe(CLAIMED_CLASS);
    expect(first.metadata?.labels).toEqual({ "app.kubernetes.io/managed-by": "telo-k8s-runner", "telo.run/owner": "default", "telo.run/session-id": SESSION });
    expect(first.metadata?.ownerReferences?.map((ref) => ref.uid)).toEqual([owner.uid]);

    // The controller has written the Ingress's status since: the replace must still go through.
    await waitFor("the controller to claim the Ingress", async () => ((await read()).status?.loadBalancer?.ingress?.length ?? 0) > 0);
    expect(await r.publish({ sessionId: SESSION, ports: [tcp(3000), tcp(9000)], owner })).toEqual([host(3000), host(9000)]);
    const second = await read();
    expect(second.metadata?.uid).toBe(first.metadata?.uid);
    expect(ruleHosts(second)).toEqual([host(3000).host, host(9000).host]);

    expect(await r.publish({ sessionId: SESSION, ports: [udp(5353)], owner })).toEqual([]);
    expect(apiReason(await rejection(read()))).toBe("the Kubernetes API rejected the request (NotFound, HTTP 404)");
    // Deleting what is already gone is no error.
    expect(await r.publish({ sessionId: SESSION, ports: [], owner })).toEqual([]);
  });

  it("starts the round over when the replace meets a newer resourceVersion", async () => {
    const { namespace, owner, router } = await session({ SESSION_ROUTING_MODE: "ingress", SESSION_INGRESS_CLASS: CLAIMED_CLASS });
    const r = await router();
    await r.publish({ sessionId: SESSION, ports: [tcp(8080)], owner });
    c.cluster.faults.failNext({ verb: "update", resource: "ingresses", namespace, code: 409 });
    expect(await r.publish({ sessionId: SESSION, ports: [tcp(8081)], owner })).toEqual([host(8081)]);
    const ingress = await c.networking.readNamespacedIngress({ name: `telo-run-${SESSION}`, namespace });
    expect(ingress.spec?.rules?.map((rule) => rule.host)).toEqual([host(8081).host]);
  });

  it("surfaces a 500 on create as the API's error, summarised by apiReason", async () => {
    const { namespace, owner, router } = await session({ SESSION_ROUTING_MODE: "ingress" });
    const r = await router();
    c.cluster.faults.failNext({ verb: "create", resource: "ingresses", namespace, code: 500 });
    const err = await rejection(r.publish({ sessionId: SESSION, ports: [tcp(8080)], owner }));
    expect(err).toBeInstanceOf(ApiException);
    expect(apiReason(err)).toBe("the Kubernetes API rejected the request (InternalError, HTTP 500)");
  });

  it("logs each host programmed once the controller claims the Ingress", async () => {
    const { owner, lines, router } = await session({ SESSION_ROUTING_MODE: "ingress", SESSION_INGRESS_CLASS: CLAIMED_CLASS });
    const r = await router();
    const hosts = await r.publish({ sessionId: SESSION, ports: [tcp(8080), tcp(3000)], owner });
    const controller = new AbortController();
    const states: unknown[] = [];
    r.watchRouteHealth(SESSION, hosts, controller.signal, { onState: (published, state) => states.push([published.port, state]) });
    await waitFor("both hosts settled", () => verdicts(lines).length === 2);
    controller.abort();
    expect(verdicts(lines)).toEqual([
      ["info", "session route programmed", 8080, undefined],
      ["info", "session route programmed", 3000, undefined],
    ]);
    expect(states).toEqual([
      [8080, "pending"],
      [3000, "pending"],
      [8080, "programmed"],
      [3000, "programmed"],
    ]);
  });

  it("logs every host unprogrammed at the deadline when no controller claims the Ingress", async () => {
    const { namespace, owner, lines, router } = await session({ SESSION_ROUTING_MODE: "ingress", SESSION_INGRESS_CLASS: "nobody-serves-this" });
    const r = await router();
    const hosts = await r.publish({ sessionId: SESSION, ports: [tcp(8080), tcp(3000)], owner });
    r.watchRouteHealth(SESSION, hosts, new AbortController().signal);
    await waitFor("the deadline", () => verdicts(lines).length === 2);
    const reason = ingressUnclaimedReason("nobody-serves-this", namespace);
    expect(verdicts(lines)).toEqual([
      ["warn", "session route unprogrammed", 8080, reason],
      ["warn", "session route unprogrammed", 3000, reason],
    ]);
  });

  it("reports a read error once and does not blame it once a verdict was read", async () => {
    const { namespace, owner, lines, router } = await session({
      SESSION_ROUTING_MODE: "ingress",
      SESSION_INGRESS_CLASS: CLAIMED_CLASS,
      SESSION_ROUTE_READY_TIMEOUT_SECONDS: "30",
    });
    const r = await router();
    const hosts = await r.publish({ sessionId: SESSION, ports: [tcp(8080)], owner });
    c.cluster.faults.failNext({ verb: "get", resource: "ingresses", namespace, code: 500 });
    const controller = new AbortController();
    r.watchRouteHealth(SESSION, hosts, controller.signal);
    await waitFor("the host settled", () => verdicts(lines).length === 2);
    controller.abort();
    expect(verdicts(lines)).toEqual([
      ["warn", "could not read route status: the Kubernetes API rejected the request (InternalError, HTTP 500)", 8080, undefined],
      ["info", "session route programmed", 8080, undefined],
    ]);
  });

  it("gives the remembered read error as the deadline's reason, reported only once before it", async () => {
    const { namespace, owner, lines, router } = await session({ SESSION_ROUTING_MODE: "ingress", SESSION_INGRESS_CLASS: CLAIMED_CLASS });
    const r = await router();
    const hosts = await r.publish({ sessionId: SESSION, ports: [tcp(8080)], owner });
    c.cluster.faults.failNext({ verb: "get", resource: "ingresses", namespace, code: 503, count: 1000 });
    const heard: string[] = [];
    try {
      r.watchRouteHealth(SESSION, hosts, new AbortController().signal, { onReadError: (line) => heard.push(line) });
      await waitFor("the deadline", () => verdicts(lines).some(([, message]) => message === "session route unprogrammed"));
    } finally {
      c.cluster.faults.clear();
    }
    const failure = "the Kubernetes API rejected the request (ServiceUnavailable, HTTP 503)";
    expect(verdicts(lines)).toEqual([
      ["warn", `could not read route status: ${failure}`, 8080, undefined],
      ["warn", "session route unprogrammed", 8080, `route status could not be read: ${failure}`],
    ]);
    // The caller (a run session's terminal) hears the first read error once, too.
    expect(heard).toEqual([`could not read route status: ${failure}`]);
  });

  it("stops silently when aborted", async () => {
    const { owner, lines, router } = await session({ SESSION_ROUTING_MODE: "ingress", SESSION_INGRESS_CLASS: "nobody-serves-this" });
    const r = await router();
    const hosts = await r.publish({ sessionId: SESSION, ports: [tcp(8080)], owner });
    const controller = new AbortController();
    r.watchRouteHealth(SESSION, hosts, controller.signal);
    controller.abort();
    // Past the one-second deadline: an unaborted watch would have reported by now.
    await new Promise((resolve) => setTimeout(resolve, 1500));
    expect(verdicts(lines)).toEqual([]);
  });
});

describe("Gateway API layer", () => {
  it("creates one HTTPRoute per tcp port, replaces kept ones and deletes routes of dropped ports", async () => {
    const { namespace, owner, router } = await session({ SESSION_ROUTING_MODE: "gateway", SESSION_GATEWAY_NAME: "gw" });
    const r = await router();
    const { names, get } = routes(namespace);
    // Another session's route in the same namespace is none of this publish's business.
    await c.custom.createNamespacedCustomObject({
      group: GROUP,
      version: "v1",
      namespace,
      plural: "httproutes",
      body: {
        apiVersion: `${GROUP}/v1`,
        kind: "HTTPRoute",
        metadata: { name: "telo-run-othersession22-8080", labels: { "telo.run/session-id": "othersession22" } },
        spec: { parentRefs: [{ name: "gw" }], hostnames: [`8080-othersession22.${DOMAIN}`] },
      },
    });

    expect(await r.publish({ sessionId: SESSION, ports: [tcp(8080), udp(53), tcp(3000)], owner })).toEqual([host(8080), host(3000)]);
    expect(await names(`telo.run/session-id=${SESSION}`)).toEqual([`telo-run-${SESSION}-3000`, `telo-run-${SESSION}-8080`]);
    const kept = await get(`telo-run-${SESSION}-3000`);
    expect(kept.spec.hostnames).toEqual([host(3000).host]);

    expect(await r.publish({ sessionId: SESSION, ports: [tcp(3000), tcp(9000)], owner })).toEqual([host(3000), host(9000)]);
    expect(await names()).toEqual([`telo-run-${SESSION}-3000`, `telo-run-${SESSION}-9000`, "telo-run-othersession22-8080"]);
    const replaced = await get(`telo-run-${SESSION}-3000`);
    expect(replaced.metadata.uid).toBe(kept.metadata.uid);

    expect(await r.publish({ sessionId: SESSION, ports: [], owner })).toEqual([]);
    expect(await names()).toEqual(["telo-run-othersession22-8080"]);
  });

  it("surfaces a 500 on create as the API's error, summarised by apiReason", async () => {
    const { namespace, owner, router } = await session({ SESSION_ROUTING_MODE: "gateway", SESSION_GATEWAY_NAME: "gw" });
    const r = await router();
    c.cluster.faults.failNext({ verb: "create", resource: "httproutes", namespace, code: 500 });
    const err = await rejection(r.publish({ sessionId: SESSION, ports: [tcp(8080), tcp(3000)], owner }));
    expect(apiReason(err)).toBe("the Kubernetes API rejected the request (InternalError, HTTP 500)");
  });

  it("logs each host programmed once its Gateway accepts the route", async () => {
    const { namespace, owner, lines, router } = await session({ SESSION_ROUTING_MODE: "gateway", SESSION_GATEWAY_NAME: "gw" });
    await createGateway(namespace);
    const r = await router();
    const hosts = await r.publish({ sessionId: SESSION, ports: [tcp(8080), tcp(3000)], owner });
    const controller = new AbortController();
    const states: unknown[] = [];
    r.watchRouteHealth(SESSION, hosts, controller.signal, { onState: (published, state) => states.push([published.port, state]) });
    await waitFor("both hosts settled", () => verdicts(lines).length === 2);
    controller.abort();
    expect(verdicts(lines)).toEqual([
      ["info", "session route programmed", 8080, undefined],
      ["info", "session route programmed", 3000, undefined],
    ]);
    expect(states).toEqual([
      [8080, "pending"],
      [3000, "pending"],
      [8080, "programmed"],
      [3000, "programmed"],
    ]);
  });

  it("logs a refused route unprogrammed with the controller's reason, and an unclaimed one at the deadline", async () => {
    const { namespace, owner, lines, router } = await session({
      SESSION_ROUTING_MODE: "gateway",
      SESSION_GATEWAY_NAME: "gw",
      SESSION_GATEWAY_SECTION_NAME: "http",
    });
    const r = await router();
    const hosts = await r.publish({ sessionId: SESSION, ports: [tcp(8080), tcp(3000)], owner });
    // No Gateway exists, so the simulator's controller stays silent; act as a controller refusing one route.
    const refused = await routes(namespace).get(`telo-run-${SESSION}-8080`);
    await c.custom.replaceNamespacedCustomObjectStatus({
      group: GROUP,
      version: "v1",
      namespace,
      plural: "httproutes",
      name: `telo-run-${SESSION}-8080`,
      body: {
        ...refused,
        status: {
          parents: [
            {
              parentRef: { group: GROUP, kind: "Gateway", name: "gw", namespace, sectionName: "http" },
              controllerName: "example.test/gateway",
              conditions: [
                {
                  type: "Accepted",
                  status: "False",
                  reason: "NotAllowedByListeners",
                  message: "no listener admits this route",
                  observedGeneration: 1,
                  lastTransitionTime: "2026-11-29T16:30:00Z",
                },
              ],
            },
          ],
        },
      },
    });
    const states: unknown[] = [];
    r.watchRouteHealth(SESSION, hosts, new AbortController().signal, { onState: (published, state, reason) => states.push([published.port, state, reason]) });
    await waitFor("both hosts settled", () => verdicts(lines).length === 2);
    const unclaimed = httpRouteUnclaimedReason({ name: "gw", namespace, sectionName: "http" }, namespace);
    expect(verdicts(lines)).toEqual([
      ["warn", "session route unprogrammed", 8080, "NotAllowedByListeners: no listener admits this route"],
      ["warn", "session route unprogrammed", 3000, unclaimed],
    ]);
    // The same states reach the session (its route events): pending as published, then each change.
    expect(states).toEqual([
      [8080, "pending", undefined],
      [3000, "pending", undefined],
      [8080, "unprogrammed", "NotAllowedByListeners: no listener admits this route"],
      [3000, "unprogrammed", unclaimed],
    ]);
  });
});

describe("publishService", () => {
  it("creates the Service plainly for run sessions: a second plain create is a conflict", async () => {
    const { namespace, owner } = await session();
    const input = { sessionId: SESSION, ports: [tcp(8080), udp(8080)], owner, namespace, managedBy: "telo-k8s-runner", ownerId: "default", replace: false };
    await publishService(api, input);
    const service = await c.core.readNamespacedService({ name: `telo-run-${SESSION}`, namespace });
    expect(service.spec?.selector).toEqual({ "telo.run/session-id": SESSION });
    expect(service.spec?.ports?.map((p) => [p.name, p.port, p.protocol])).toEqual([
      ["p8080", 8080, "TCP"],
      ["p8080-udp", 8080, "UDP"],
    ]);
    expect(service.metadata?.ownerReferences?.map((ref) => ref.uid)).toEqual([owner.uid]);
    expect(apiReason(await rejection(publishService(api, input)))).toBe("the Kubernetes API rejected the request (AlreadyExists, HTTP 409)");
  });

  it("creates or replaces it for watch sessions, keeping its clusterIP and taking the new owner", async () => {
    const { namespace, owner } = await session();
    const base = { sessionId: SESSION, namespace, managedBy: "telo-k8s-runner", ownerId: "default", replace: true };
    await publishService(api, { ...base, ports: [tcp(8080)], owner });
    const first = await c.core.readNamespacedService({ name: `telo-run-${SESSION}`, namespace });

    const next = await c.core.createNamespacedPod({ namespace, body: pod(`telo-watch-${SESSION}-b`) });
    const nextOwner = { name: next.metadata!.name!, uid: next.metadata!.uid! };
    await publishService(api, { ...base, ports: [tcp(3000), tcp(9000)], owner: nextOwner });
    const second = await c.core.readNamespacedService({ name: `telo-run-${SESSION}`, namespace });
    expect(second.metadata?.uid).toBe(first.metadata?.uid);
    expect(second.spec?.clusterIP).toBe(first.spec?.clusterIP);
    expect(second.spec?.clusterIPs).toEqual(first.spec?.clusterIPs);
    expect(second.spec?.ports?.map((p) => p.port)).toEqual([3000, 9000]);
    expect(second.metadata?.ownerReferences?.map((ref) => ref.uid)).toEqual([nextOwner.uid]);
  });

  it("surfaces a 500 on create as the API's error", async () => {
    const { namespace, owner } = await session();
    c.cluster.faults.failNext({ verb: "create", resource: "services", namespace, code: 500 });
    const err = await rejection(publishService(api, { sessionId: SESSION, ports: [tcp(8080)], owner, namespace, managedBy: "telo-k8s-runner", ownerId: "default", replace: true }));
    expect(apiReason(err)).toBe("the Kubernetes API rejected the request (InternalError, HTTP 500)");
  });
});
