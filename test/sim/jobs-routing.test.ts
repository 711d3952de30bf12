// batch/v1 Jobs run by the simulated job controller (the legacy build path), and the stand-in
// ingress and Gateway API controllers that give route health something to read.
import { ApisApi } from "@kubernetes/client-node";
import { describe, expect, it } from "vitest";
import { freshNamespace, statusOf, useCluster } from "./helpers.ts";
import { waitFor } from "../support/wait.ts";

const c = useCluster();

function buildJob(name: string, annotations: Record<string, string>, spec: Record<string, unknown> = {}) {
  return {
    metadata: { name, labels: { "app.kubernetes.io/managed-by": "telo-k8s-runner", "telo.run/build": "true" } },
    spec: {
      backoffLimit: 0,
      ...spec,
      template: {
        metadata: { labels: { "app.kubernetes.io/managed-by": "telo-k8s-runner", "telo.run/build": "true" }, annotations },
        spec: {
          restartPolicy: "Never",
          automountServiceAccountToken: false,
          initContainers: [{ name: "context-fetch", image: "busybox:stable", command: ["sh", "-c"], args: ["wget ..."] }],
          containers: [{ name: "kaniko", image: "gcr.io/kaniko-project/executor:latest", args: ["--context=dir:///workspace"] }],
        },
      },
    },
  };
}

async function jobDone(ns: string, name: string) {
  return waitFor(`${name} finished`, async () => {
    const j = await c.batch.readNamespacedJob({ name, namespace: ns });
    return j.status?.conditions?.some((x) => (x.type === "Complete" || x.type === "Failed") && x.status === "True") ? j : undefined;
  });
}

describe("jobs", () => {
  it("runs a build job to Complete with its pod's logs readable by job-name", async () => {
    const ns = await freshNamespace(c);
    await c.batch.createNamespacedJob({ namespace: ns, body: buildJob("telo-build-ok", { "sim.k8s-runner.dev/output.kaniko": "INFO Pushing image\n", "sim.k8s-runner.dev/run-ms.kaniko": "50" }) });
    const job = await jobDone(ns, "telo-build-ok");
    expect(job.status?.succeeded).toBe(1);
    expect(job.status?.conditions?.map((x) => x.type)).toEqual(["SuccessCriteriaMet", "Complete"]);
    expect(job.status?.completionTime).toBeInstanceOf(Date);
    const pods = await c.core.listNamespacedPod({ namespace: ns, labelSelector: "job-name=telo-build-ok" });
    expect(pods.items).toHaveLength(1);
    const p = pods.items[0]!;
    expect(p.metadata?.ownerReferences?.[0]).toMatchObject({ kind: "Job", name: "telo-build-ok", controller: true });
    expect(await c.core.readNamespacedPodLog({ name: p.metadata!.name!, namespace: ns, container: "kaniko", tailLines: 20 })).toBe("INFO Pushing image\n");
  });

  it("logs a Kaniko build and push by default (image convention)", async () => {
    const ns = await freshNamespace(c);
    const body = buildJob("telo-build-default", {});
    body.spec.template.spec.containers[0]!.args = ["--context=dir:///workspace", "--destination=registry.example/telo:abc123"];
    await c.batch.createNamespacedJob({ namespace: ns, body });
    expect((await jobDone(ns, "telo-build-default")).status?.succeeded).toBe(1);
    const pods = await c.core.listNamespacedPod({ namespace: ns, labelSelector: "job-name=telo-build-default" });
    const log = await c.core.readNamespacedPodLog({ name: pods.items[0]!.metadata!.name!, namespace: ns, container: "kaniko" });
    expect(log).toContain("INFO[0001] Pushing image to registry.example/telo:abc123\n");
    expect(log).toMatch(/Pushed registry\.example\/telo@sha256:[0-9a-f]{64}\n$/);
  });

  it("fails a job past its backoff limit, and one past its deadline", async () => {
    const ns = await freshNamespace(c);
    await c.batch.createNamespacedJob({ namespace: ns, body: buildJob("telo-build-bad", { "sim.k8s-runner.dev/exit-code.kaniko": "1", "sim.k8s-runner.dev/stderr.kaniko": "error building image\n" }) });
    const failed = await jobDone(ns, "telo-build-bad");
    expect(failed.status?.failed).toBe(1);
    expect(failed.status?.conditions?.find((x) => x.type === "Failed")).toMatchObject({ reason: "BackoffLimitExceeded", message: "Job has reached the specified backoff limit" });
    const pods = await c.core.listNamespacedPod({ namespace: ns, labelSelector: "job-name=telo-build-bad" });
    expect(await c.core.readNamespacedPodLog({ name: pods.items[0]!.metadata!.name!, namespace: ns, container: "kaniko" })).toBe("error building image\n");

    await c.batch.createNamespacedJob({ namespace: ns, body: buildJob("telo-build-slow", { "sim.k8s-runner.dev/run-ms.kaniko": "60000" }, { activeDeadlineSeconds: 1 }) });
    const late = await jobDone(ns, "telo-build-slow");
    expect(late.status?.conditions?.find((x) => x.type === "Failed")?.reason).toBe("DeadlineExceeded");
  });

  it("retries failed pods up to backoffLimit and removes a finished job after its TTL, pods included", async () => {
    const ns = await freshNamespace(c);
    await c.batch.createNamespacedJob({ namespace: ns, body: buildJob("retry", { "sim.k8s-runner.dev/exit-code.kaniko": "2" }, { backoffLimit: 1, ttlSecondsAfterFinished: 0 }) });
    await waitFor("job removed after TTL", async () => (await statusOf(c.batch.readNamespacedJob({ name: "retry", namespace: ns }))).code === 404);
    await waitFor("its pods collected", async () => (await c.core.listNamespacedPod({ namespace: ns, labelSelector: "job-name=retry" })).items.length === 0);
  });
});

describe("routing stand-ins", () => {
  it("serves ingresses and ingressclasses; a claimed Ingress gets a load-balancer address", async () => {
    const ns = await freshNamespace(c);
    await c.networking.createIngressClass({ body: { metadata: { name: "sim", annotations: { "ingressclass.kubernetes.io/is-default-class": "true" } }, spec: { controller: "sim.k8s-runner.dev/ingress" } } });
    const rule = (port: number) => ({ host: `${port}-abc.example.test`, http: { paths: [{ path: "/", pathType: "Prefix", backend: { service: { name: "telo-run-abc", port: { number: port } } } }] } });
    await c.networking.createNamespacedIngress({ namespace: ns, body: { metadata: { name: "telo-run-abc" }, spec: { ingressClassName: "sim", rules: [rule(8080)] } } });
    await c.networking.createNamespacedIngress({
      namespace: ns,
      body: { metadata: { name: "unclaimed", annotations: { "sim.k8s-runner.dev/route": "unclaimed" } }, spec: { ingressClassName: "sim", rules: [rule(9090)] } },
    });
    const ing = await waitFor("ingress programmed", async () => {
      const i = await c.networking.readNamespacedIngress({ name: "telo-run-abc", namespace: ns });
      return i.status?.loadBalancer?.ingress?.length ? i : undefined;
    });
    expect(ing.status?.loadBalancer?.ingress?.[0]?.ip).toBe("127.0.0.1");
    expect((await c.networking.readNamespacedIngress({ name: "unclaimed", namespace: ns })).status?.loadBalancer?.ingress).toBeUndefined();
    const classes = await c.networking.listIngressClass();
    expect(classes.items.map((x) => x.metadata?.name)).toContain("sim");
  });

  it("serves gateway.networking.k8s.io: discovery, Gateways and HTTPRoutes with parent status", async () => {
    const groups = await c.kc.makeApiClient(ApisApi).getAPIVersions();
    const gw = groups.groups.find((g) => g.name === "gateway.networking.k8s.io");
    expect(gw?.preferredVersion?.version).toBe("v1");
    const ns = await freshNamespace(c);
    const group = "gateway.networking.k8s.io";
    await c.custom.createNamespacedCustomObject({
      group,
      version: "v1",
      namespace: ns,
      plural: "gateways",
      body: { apiVersion: `${group}/v1`, kind: "Gateway", metadata: { name: "gw" }, spec: { gatewayClassName: "sim", listeners: [{ name: "https", port: 443, protocol: "HTTPS" }] } },
    });
    const route = (name: string, gateway: string, annotations: Record<string, string> = {}) => ({
      apiVersion: `${group}/v1`,
      kind: "HTTPRoute",
      metadata: { name, annotations },
      spec: {
        parentRefs: [{ group, kind: "Gateway", name: gateway, namespace: ns }],
        hostnames: ["8080-abc.example.test"],
        rules: [{ matches: [{ path: { type: "PathPrefix", value: "/" } }], backendRefs: [{ name: "telo-run-abc", port: 8080 }] }],
      },
    });
    await c.custom.createNamespacedCustomObject({ group, version: "v1", namespace: ns, plural: "httproutes", body: route("ok", "gw") });
    await c.custom.createNamespacedCustomObject({ group, version: "v1", namespace: ns, plural: "httproutes", body: route("rejected", "gw", { "sim.k8s-runner.dev/route": "rejected" }) });
    await c.custom.createNamespacedCustomObject({ group, version: "v1", namespace: ns, plural: "httproutes", body: route("orphan", "missing") });
    const read = (name: string) => c.custom.getNamespacedCustomObject({ group, version: "v1", namespace: ns, plural: "httproutes", name }) as Promise<{ status?: { parents?: { conditions: { type: string; status: string; reason: string }[] }[] } }>;
    const ok = await waitFor("route accepted", async () => ((await read("ok")).status?.parents?.length ? read("ok") : undefined));
    expect(ok.status!.parents![0]!.conditions.map((x) => [x.type, x.status])).toEqual([["Accepted", "True"], ["ResolvedRefs", "True"]]);
    const rej = await waitFor("route rejected", async () => ((await read("rejected")).status?.parents?.length ? read("rejected") : undefined));
    expect(rej.status!.parents![0]!.conditions[0]).toMatchObject({ type: "Accepted", status: "False", reason: "NotAllowedByListeners" });
    expect((await read("orphan")).status).toBeUndefined();
    const labelled = await c.custom.listNamespacedCustomObject({ group, version: "v1", namespace: ns, plural: "httproutes" });
    expect((labelled as { items: unknown[] }).items).toHaveLength(3);
  });
});
