/**
 * The warm pool on both clusters (docs/kubernetes.md "Warm pool"): on the real one this is what only a real control
 * plane can say, that pool pods pass the restricted Pod Security profile and start (the init
 * image's busybox copied, the waiting shell run by the kernel image, the stand-in included), and
 * that a claim needs no RBAC k8s/base does not grant (the tier's audit test reads every call).
 */
import { DiscoveryV1Api, type V1Pod } from "@kubernetes/client-node";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { LABEL } from "../../src/kube/specs/names.ts";
import { type ClusterRunner, ON_REAL_CLUSTER, SESSION_NAMESPACE, kubeSessionBody, startClusterRunner } from "../support/kube-runner.ts";
import { scrape, valueOf } from "../support/metrics.ts";
import { eventsOf, eventsUntil, framesToClose, framesUntilText, isStatus, textOf } from "../support/streams.ts";
import { waitFor } from "../support/wait.ts";

// A real pod takes seconds to pull, copy its shell and start on a busy 2-core machine.
const READY_MS = ON_REAL_CLUSTER ? 90_000 : 20_000;

describe(`the warm pool on the ${ON_REAL_CLUSTER ? "real" : "simulated"} cluster`, () => {
  let runner: ClusterRunner;
  beforeAll(async () => {
    // Ingress routing, so that a session with ports gets its Service.
    runner = await startClusterRunner({ env: { RUNNER_WARM_POOL_SIZE: "1", SESSION_ROUTING_MODE: "ingress", SESSION_ROUTING_BASE_DOMAIN: "sessions.example.test" } });
  });
  afterAll(async () => {
    if (!runner) return;
    // The pool's pods outlive the supervisor by design (the next one adopts them): with it
    // stopped, nothing refills, and the test's own pods go before the next file looks.
    await runner.stopSupervisor();
    await runner.core.deleteCollectionNamespacedPod({ namespace: SESSION_NAMESPACE, labelSelector: `${LABEL.pool}=true`, gracePeriodSeconds: 0 });
    await waitFor("the pool pods to be gone", async () => (await runner.sessionPods()).length === 0 || undefined, READY_MS);
    await runner.close();
  });

  const ready = () =>
    waitFor("a ready pool pod", async () => valueOf(await scrape(runner.baseUrl), "runner_warm_pool_pods", { state: "ready" }) === 1 || undefined, READY_MS);

  const sessionPod = async (sessionId: string): Promise<V1Pod | undefined> =>
    (await runner.core.listNamespacedPod({ namespace: SESSION_NAMESPACE, labelSelector: `${LABEL.sessionId}=${sessionId}` })).items[0];

  it("admits and starts pool pods, and a claimed one runs the session: terminal, stop", async () => {
    await ready();
    const { sessionId } = await runner.client.createSession(kubeSessionBody());
    await eventsUntil(runner.client, sessionId, isStatus("running"));
    expect((await sessionPod(sessionId))?.metadata?.name).toMatch(/^telo-pool-/);
    const terminal = runner.client.terminal(sessionId);
    await terminal.send("hello warm pod\r");
    expect(textOf(await framesUntilText(terminal, "hello warm pod"))).toContain("hello warm pod");
    terminal.close();
    await runner.client.deleteSession(sessionId);
    expect(eventsOf(await eventsUntil(runner.client, sessionId)).at(-1)).toEqual({ type: "status", status: { kind: "stopped" } });
  });

  it("hands the kernel the session's bundle: what its manifest asks for happens", async () => {
    await ready();
    const { sessionId } = await runner.client.createSession(kubeSessionBody({ output: "from the bundle\n", "exit-code": 3, "run-ms": 300 }));
    const end = eventsOf(await eventsUntil(runner.client, sessionId)).at(-1);
    expect(end).toEqual({ type: "status", status: { kind: "failed", message: 'container "session" failed: Error (exit code 3): from the bundle' } });
    expect(textOf(await framesToClose(runner.client.terminal(sessionId)))).toContain("from the bundle");
    const starts = await scrape(runner.baseUrl);
    expect(valueOf(starts, "runner_warm_pool_starts_total", { start: "warm" })).toBe(2);
  });

  // A pool pod's container declares no ports, and needs none: the kernel listens where its
  // application says, the runner dials the pod's IP, and the Service targets the number.
  it("serves a session with declared ports: the claimed pod is reachable on them, and its Service selects it", async () => {
    await ready();
    const { sessionId } = await runner.client.createSession(kubeSessionBody({}, { ports: [{ port: 3000, protocol: "tcp" }] }));
    const events = eventsOf(await eventsUntil(runner.client, sessionId, (event) => event.type === "reachability" && event.state === "reachable"));
    const host = `3000-${sessionId}.sessions.example.test`;
    expect(events).toContainEqual({ type: "status", status: { kind: "running", endpoints: [{ host, port: 3000, protocol: "tcp", url: `https://${host}` }] } });
    const pod = await sessionPod(sessionId);
    expect(pod?.metadata?.name).toMatch(/^telo-pool-/);
    expect(pod?.spec?.containers.find((container) => container.name === "session")?.ports).toBeUndefined();
    const service = await runner.core.readNamespacedService({ name: `telo-run-${sessionId}`, namespace: SESSION_NAMESPACE });
    expect(service.spec?.ports?.map(({ port, targetPort }) => ({ port, targetPort }))).toEqual([{ port: 3000, targetPort: 3000 }]);
    expect(service.metadata?.ownerReferences?.[0]).toMatchObject({ kind: "Pod", name: pod?.metadata?.name });
    if (ON_REAL_CLUSTER) {
      // The control plane's own account: the EndpointSlice controller puts the claimed pod, ready, behind port 3000.
      const discovery = runner.kubeConfig.makeApiClient(DiscoveryV1Api);
      await waitFor(
        "the Service's endpoint to be the claimed pod",
        async () => {
          const slices = (await discovery.listNamespacedEndpointSlice({ namespace: SESSION_NAMESPACE, labelSelector: `kubernetes.io/service-name=telo-run-${sessionId}` })).items;
          return slices.some(
            (slice) =>
              slice.ports?.some((port) => port.port === 3000) &&
              slice.endpoints.some((endpoint) => endpoint.targetRef?.name === pod?.metadata?.name && endpoint.conditions?.ready === true && endpoint.addresses.includes(pod?.status?.podIP ?? "")),
          ) || undefined;
        },
        READY_MS,
      );
    }
    expect(valueOf(await scrape(runner.baseUrl), "runner_warm_pool_starts_total", { start: "warm" })).toBe(3);
    await runner.client.deleteSession(sessionId);
    expect(eventsOf(await eventsUntil(runner.client, sessionId)).at(-1)).toEqual({ type: "status", status: { kind: "stopped" } });
  });
});
