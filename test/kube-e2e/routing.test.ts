/**
 * Routing through the runner's processes: a session with ports gets a Service and an Ingress
 * owned by its pod, reports routed endpoints, and leaves nothing behind when stopped
 * (docs/kubernetes.md "Services and routes"). Runs on both clusters (the real one has no Ingress controller: nothing
 * reports the Ingress admitted, and the endpoints come from the spec).
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { waitFor } from "../support/wait.ts";
import { type ClusterRunner, ON_REAL_CLUSTER, SESSION_NAMESPACE, kubeSessionBody, startClusterRunner } from "../support/kube-runner.ts";
import { eventsOf, eventsUntil, isStatus } from "../support/streams.ts";

describe("session routing with an Ingress", () => {
  let runner: ClusterRunner;
  beforeAll(async () => {
    runner = await startClusterRunner({ env: { SESSION_ROUTING_MODE: "ingress", SESSION_ROUTING_BASE_DOMAIN: "sessions.example.test" } });
    // The simulated cluster's ingress controller claims Ingresses of a class it finds, as a real
    // controller does; the real tier has none, so its routes stay pending.
    if (!ON_REAL_CLUSTER) {
      await runner.networking.createIngressClass({
        body: {
          metadata: { name: "sim-ingress", annotations: { "ingressclass.kubernetes.io/is-default-class": "true" } },
          spec: { controller: "example.test/ingress" },
        },
      });
    }
  });
  afterAll(() => runner?.close());

  it("publishes a Service and an Ingress for the session's ports and removes them with the pod", async () => {
    const { sessionId } = await runner.client.createSession(
      kubeSessionBody({ listen: true }, { ports: [{ port: 3000, protocol: "tcp" }, { port: 5353, protocol: "udp" }] }),
    );
    const events = eventsOf(await eventsUntil(runner.client, sessionId, isStatus("running")));
    const host = `3000-${sessionId}.sessions.example.test`;
    expect(events.at(-1)).toEqual({
      type: "status",
      status: {
        kind: "running",
        endpoints: [
          { host, port: 3000, protocol: "tcp", url: `https://${host}` },
          { host: "", port: 5353, protocol: "udp" },
        ],
      },
    });
    const name = `telo-run-${sessionId}`;
    const service = await waitFor(
      "the Service",
      () => runner.core.readNamespacedService({ name, namespace: SESSION_NAMESPACE }).catch(() => undefined),
    );
    expect(service.spec?.ports?.map((port) => `${port.protocol}/${port.port}`)).toEqual(["TCP/3000", "UDP/5353"]);
    expect(service.metadata?.ownerReferences?.[0]).toMatchObject({ kind: "Pod", name, controller: true });
    const ingress = await waitFor(
      "the Ingress",
      () => runner.networking.readNamespacedIngress({ name, namespace: SESSION_NAMESPACE }).catch(() => undefined),
    );
    expect(ingress.spec?.rules?.map((rule) => rule.host)).toEqual([host]);
    // The routed port's state as `route` events: pending when published, then programmed once an
    // ingress controller gives the Ingress an address (the real tier has none: pending only).
    const routed = (event: { type: string; state?: string }) => event.type === "route" && (ON_REAL_CLUSTER || event.state === "programmed");
    const routes = eventsOf(await eventsUntil(runner.client, sessionId, routed)).filter((event) => event.type === "route");
    expect(routes[0]).toEqual({ type: "route", app: "app", host, port: 3000, state: "pending" });
    if (!ON_REAL_CLUSTER) expect(routes.at(-1)).toEqual({ type: "route", app: "app", host, port: 3000, state: "programmed" });
    expect(routes.every((event) => event.type === "route" && event.port === 3000)).toBe(true);

    await runner.client.deleteSession(sessionId);
    await waitFor("the pod, Service and Ingress to be gone", async () => {
      const [pods, services, ingresses] = await Promise.all([
        runner.sessionPods(),
        runner.core.listNamespacedService({ namespace: SESSION_NAMESPACE }),
        runner.networking.listNamespacedIngress({ namespace: SESSION_NAMESPACE }),
      ]);
      return (pods.length === 0 && services.items.length === 0 && ingresses.items.length === 0) || undefined;
    });
  });
});
