/**
 * The runner's RBAC against the calls it really makes: both processes run against the simulated
 * cluster with an overlay's configuration, sessions go through their life cycle, and every API
 * request the simulated apiserver recorded must be allowed by the rules that overlay grants.
 * With the calls the source can make (source-calls.ts), every granted permission must be used.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type KubeRunner, startKubeRunner } from "../support/kube-runner.ts";
import { sessionBody } from "../support/session-body.ts";
import { eventsUntil, framesUntilText, isStatus } from "../support/streams.ts";
import { requestsNotAllowedBy, rulesForServiceAccount, rulesNotExercised, type ApiRequest } from "./rbac.ts";
import { containerEnv, render, runnerDeployment, type K8sObject } from "./render.ts";
import { sourceApiCalls } from "./source-calls.ts";

const ROUTING_AND_BUILD = [
  "SESSION_ROUTING_MODE",
  "SESSION_ROUTING_BASE_DOMAIN",
  "SESSION_INGRESS_CLASS",
  "SESSION_GATEWAY_NAME",
  "SESSION_GATEWAY_NAMESPACE",
  "SESSION_GATEWAY_SECTION_NAME",
  "RUNNER_IMAGE_REPOSITORY",
  "RUNNER_BUILD_NAMESPACE",
  "RUNNER_WATCH_SESSIONS",
  "RUNNER_APPS",
];

/** The overlay's routing and build settings (the harness supplies ports, socket and kubeconfig). */
function overlayEnv(overlay: string): Record<string, string> {
  const objects = render(`overlays/${overlay}`);
  const env = containerEnv(objects, runnerDeployment(objects).spec.template.spec.containers[0]!);
  const valueOf = (name: string): string | undefined => {
    const variable = env.get(name);
    const ref = variable?.valueFrom?.secretKeyRef;
    if (!ref) return variable?.value;
    const secret = objects.find((o) => o.kind === "Secret" && o.metadata.name === ref.name) as K8sObject & { data: Record<string, string> };
    return Buffer.from(secret.data[ref.key]!, "base64").toString("utf8");
  };
  return Object.fromEntries(ROUTING_AND_BUILD.flatMap((name) => (valueOf(name) !== undefined ? [[name, valueOf(name)!]] : [])));
}

const rulesOf = (overlay: string) => rulesForServiceAccount(render(`overlays/${overlay}`), "telo-runner", "telo-k8s-runner");

/**
 * Calls the runner makes that the manifests refuse on purpose: reading the registry push Secret
 * for the authenticated existence check. The runner reads no Secret but the replicas' peer
 * credential, by name; without it the check goes anonymous (and a private registry means
 * "build"), which the code handles.
 */
const DELIBERATELY_DENIED: ApiRequest[] = [{ verb: "get", apiGroup: "", resource: "secrets", namespace: "telo-builds" }];

const recordedByOverlay = new Map<string, ApiRequest[]>();

/** One runner per overlay: boot, a run session with a port and its terminal, a stop, an exit, a probe, a restart. */
function driveRunner(
  overlay: string,
  setup: (runner: KubeRunner) => Promise<void> = async () => {},
  more: (runner: KubeRunner) => Promise<void> = async () => {},
) {
  let runner: KubeRunner;
  beforeAll(async () => {
    runner = await startKubeRunner({ env: overlayEnv(overlay) });
    await setup(runner);
    // Only the runner's own calls from here on; its boot is recorded by the restart below.
    runner.sim.resetCounters();
    await runner.stopSupervisor();
    await runner.startSupervisor();

    const { sessionId } = await runner.client.createSession(
      sessionBody({ simulate: { listen: true } }, { ports: [{ port: 3000, protocol: "tcp" }] }),
    );
    await eventsUntil(runner.client, sessionId, isStatus("running"));
    const terminal = runner.client.terminal(sessionId);
    await terminal.send("hello\r");
    await framesUntilText(terminal, "hello");
    terminal.close();
    await runner.client.deleteSession(sessionId);
    await eventsUntil(runner.client, sessionId);

    const failing = await runner.client.createSession(sessionBody({ simulate: { output: "bad\n", "exit-code": 3, "run-ms": 100 } }));
    await eventsUntil(runner.client, failing.sessionId);
    await runner.client.probe({ image: "telorun/node:latest-slim", pullPolicy: "missing" });
    await more(runner);
    recordedByOverlay.set(overlay, runner.sim.recordedRequests());
  }, 120_000);
  afterAll(() => runner?.close());
}

const probesAnswered = new Map<string, number>();

describe.each(["plain", "build"])("overlay %s: every call the runner made is granted", (overlay) => {
  driveRunner(overlay, async (runner) => {
    // the api container's probe path, as the Deployment declares it, on the running api
    const api = runnerDeployment(render(`overlays/${overlay}`)).spec.template.spec.containers.find((c) => c.name === "api")!;
    probesAnswered.set(overlay, (await fetch(`${runner.baseUrl}${api.livenessProbe!.httpGet!.path}`)).status);
  });
  it("answers the api's probe", () => {
    expect(probesAnswered.get(overlay)).toBe(200);
  });
  it("is allowed by the overlay's RBAC", () => {
    const recorded = recordedByOverlay.get(overlay)!;
    // the terminal's WebSocket attach is authorized as get and as create, as kube-apiserver 1.36 does
    expect(recorded.filter((r) => r.resource === "pods" && r.subresource === "attach").map((r) => r.verb)).toEqual(expect.arrayContaining(["get", "create"]));
    // the flows reached the overlay's routing layer, and the build path where it is on
    expect(recorded.some((r) => r.resource === "ingresses" && r.verb === "create")).toBe(true);
    expect(recorded.some((r) => r.resource === "jobs" && r.verb === "create")).toBe(overlay === "build");
    expect(requestsNotAllowedBy(rulesOf(overlay), recorded)).toEqual([]);
  });
});

describe("overlay gateway: every call the runner made is granted", () => {
  driveRunner("gateway", async (runner) => {
    // the Gateway the overlay ships (its CRDs are served by the simulated cluster)
    const gateway = render("overlays/gateway").find((o) => o.kind === "Gateway")!;
    await runner.sim.kubeConfig().makeApiClient((await import("@kubernetes/client-node")).CustomObjectsApi).createNamespacedCustomObject({
      group: "gateway.networking.k8s.io",
      version: "v1",
      namespace: gateway.metadata.namespace!,
      plural: "gateways",
      body: gateway,
    });
  });
  it("is allowed by the overlay's RBAC", () => {
    const recorded = recordedByOverlay.get("gateway")!;
    expect(recorded.some((r) => r.resource === "httproutes")).toBe(true);
    expect(requestsNotAllowedBy(rulesOf("gateway"), recorded)).toEqual([]);
  });
});

describe("overlay example: every call of watch and predefined-app sessions is granted", () => {
  const WEB = "web/telo.yaml";
  const web = (ports: number[]) => ({
    name: "web",
    entryRelativePath: WEB,
    ports: ports.map((port) => ({ port, protocol: "tcp" as const })),
    io: "tty" as const,
  });
  driveRunner("example", undefined, async (runner) => {
    // A watch session (workspace ConfigMap, watch pod, Service and Ingress), whose app set gains
    // a port (Service and Ingress replaced) and then loses every port (Ingress deleted).
    const { sessionId } = await runner.client.createSession({
      mode: "watch",
      apps: [web([3000])],
      bundle: { entryRelativePath: WEB, files: [{ relativePath: WEB, contents: "kind: Telo.Application\n" }] },
      env: {},
      config: { image: "telorun/node:latest-slim", pullPolicy: "missing", simulate: { listen: true } },
    });
    // every app-set change brings the session to `running` again
    const untilRunning = (count: number) => {
      let seen = 0;
      return eventsUntil(runner.client, sessionId, (event) => isStatus("running")(event) && ++seen >= count);
    };
    await untilRunning(1);
    await runner.client.setApps(sessionId, { apps: [web([3000, 3001])] });
    await untilRunning(2);
    await runner.client.setApps(sessionId, { apps: [web([])] });
    await untilRunning(3);
    await runner.client.deleteSession(sessionId);
    await eventsUntil(runner.client, sessionId);

    // A predefined app from the catalog Secret, with its workload token's Secret.
    const app = await runner.client.createAppSession("hello");
    await eventsUntil(runner.client, app.sessionId, isStatus("running"));
    await runner.client.deleteSession(app.sessionId);
    await eventsUntil(runner.client, app.sessionId);
  });
  it("is allowed by the overlay's RBAC", () => {
    const recorded = recordedByOverlay.get("example")!;
    expect(recorded.some((r) => r.resource === "configmaps" && r.verb === "create")).toBe(true);
    expect(recorded.filter((r) => r.resource === "secrets" && r.namespace === "telo-sessions").map((r) => r.verb)).toEqual(expect.arrayContaining(["create", "update"]));
    expect(requestsNotAllowedBy(rulesOf("example"), recorded)).toEqual([]);
  });
});

describe("the runner's RBAC grants nothing the runner does not use", () => {
  it("every grant is exercised by a recorded call or made by the source", () => {
    const recorded = [...recordedByOverlay.values()].flat();
    const rules = rulesOf("build"); // the widest overlay: session, cluster and build rules
    const source = sourceApiCalls();
    // the source's calls carry no namespace: let them stand for any scope
    const unused = rulesNotExercised(rules, recorded).filter(
      (grant) =>
        !source.some((call) => call.verb === grant.verb && call.apiGroup === grant.apiGroup && call.resource === grant.resource),
    );
    // create pods/attach included: the simulator authorizes the terminal's attach as the apiserver does
    expect(unused).toEqual([]);
  });

  it("every call the source can make is granted, except the documented Secret read", () => {
    const rules = rulesOf("build");
    // A grant limited to named objects (the replicas' peer credential) grants none of the others.
    const granted = (call: { verb: string; apiGroup: string; resource: string }) =>
      rules.some((scope) =>
        scope.rules.some(
          (rule) =>
            !rule.resourceNames &&
            (rule.apiGroups ?? []).includes(call.apiGroup) &&
            (rule.resources ?? []).includes(call.resource) &&
            rule.verbs.includes(call.verb),
        ),
      );
    const refused = sourceApiCalls().filter((call) => !granted(call));
    // The source's calls name no namespace: the build namespace's Secret read is the same call as
    // the session namespace's token read, which is granted; the read it makes in the build
    // namespace stays refused.
    expect(refused).toEqual([]);
    expect(requestsNotAllowedBy(rules, DELIBERATELY_DENIED)).toEqual(DELIBERATELY_DENIED);
  });
});
