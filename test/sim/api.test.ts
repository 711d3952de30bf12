// CRUD, Status errors, selectors and patches through the real @kubernetes/client-node.
import { PatchStrategy, setHeaderOptions, type V1Pod } from "@kubernetes/client-node";
import { describe, expect, it } from "vitest";
import { freshNamespace, pod, statusOf, useCluster } from "./helpers.ts";

const c = useCluster();

describe("simulated apiserver: objects", () => {
  it("creates, reads, lists, updates and deletes configmaps with resourceVersions", async () => {
    const ns = await freshNamespace(c);
    const created = await c.core.createNamespacedConfigMap({ namespace: ns, body: { metadata: { name: "cm", labels: { a: "1" } }, data: { k: "v" } } });
    expect(created.metadata?.uid).toMatch(/^[0-9a-f-]{36}$/);
    expect(created.metadata?.creationTimestamp).toBeInstanceOf(Date);
    const rv1 = Number(created.metadata?.resourceVersion);
    const read = await c.core.readNamespacedConfigMap({ name: "cm", namespace: ns });
    expect(read.data).toEqual({ k: "v" });
    read.data = { k: "w" };
    const updated = await c.core.replaceNamespacedConfigMap({ name: "cm", namespace: ns, body: read });
    expect(Number(updated.metadata?.resourceVersion)).toBeGreaterThan(rv1);
    const list = await c.core.listNamespacedConfigMap({ namespace: ns });
    expect(list.items.map((i) => i.metadata?.name)).toEqual(["cm"]);
    expect(Number(list.metadata?.resourceVersion)).toBeGreaterThanOrEqual(Number(updated.metadata?.resourceVersion));
    await c.core.deleteNamespacedConfigMap({ name: "cm", namespace: ns });
    const gone = await statusOf(c.core.readNamespacedConfigMap({ name: "cm", namespace: ns }));
    expect(gone).toMatchObject({ code: 404, reason: "NotFound", message: 'configmaps "cm" not found', details: { name: "cm", kind: "configmaps" } });
  });

  it("answers 409 AlreadyExists on a duplicate create and 409 Conflict on a stale resourceVersion", async () => {
    const ns = await freshNamespace(c);
    const s = await c.core.createNamespacedSecret({ namespace: ns, body: { metadata: { name: "s" }, stringData: { a: "b" } } });
    const dup = await statusOf(c.core.createNamespacedSecret({ namespace: ns, body: { metadata: { name: "s" } } }));
    expect(dup).toMatchObject({ code: 409, reason: "AlreadyExists", message: 'secrets "s" already exists' });
    await c.core.replaceNamespacedSecret({ name: "s", namespace: ns, body: { ...s, data: { x: "eQ==" } } });
    const stale = await statusOf(c.core.replaceNamespacedSecret({ name: "s", namespace: ns, body: { ...s, data: { x: "eg==" } } }));
    expect(stale.code).toBe(409);
    expect(stale.reason).toBe("Conflict");
    expect(stale.message).toBe('Operation cannot be fulfilled on secrets "s": the object has been modified; please apply your changes to the latest version and try again');
  });

  it("shapes Status bodies exactly as the apiserver does, group-qualified for grouped resources", async () => {
    const res = await fetch(`${c.cluster.url}/apis/batch/v1/namespaces/default/jobs/missing`);
    expect(res.status).toBe(404);
    expect(res.headers.get("content-type")).toBe("application/json");
    expect(await res.json()).toEqual({
      kind: "Status",
      apiVersion: "v1",
      metadata: {},
      status: "Failure",
      message: 'jobs.batch "missing" not found',
      reason: "NotFound",
      details: { name: "missing", group: "batch", kind: "jobs" },
      code: 404,
    });
    const del = await fetch(`${c.cluster.url}/api/v1/namespaces/default/configmaps/gone-soon`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ metadata: { name: "gone-soon" } }) });
    expect(await del.json()).toMatchObject({ code: 405, reason: "MethodNotAllowed", message: "the server does not allow this method on the requested resource" });
    await c.core.createNamespacedConfigMap({ namespace: "default", body: { metadata: { name: "gone-soon" } } });
    const ok = await fetch(`${c.cluster.url}/api/v1/namespaces/default/configmaps/gone-soon`, { method: "DELETE" });
    expect(await ok.json()).toMatchObject({ kind: "Status", apiVersion: "v1", status: "Success", details: { name: "gone-soon", kind: "configmaps" } });
  });

  it("validates fields server-side: Strict refuses unknown fields, Warn (the default) drops them with a warning", async () => {
    const ns = await freshNamespace(c);
    const body = JSON.stringify({ apiVersion: "v1", kind: "Pod", metadata: { name: "typo", labelz: { a: "b" } }, spec: { containers: [{ name: "c", image: "busybox", imagee: "x" }] } });
    const post = (q: string) => fetch(`${c.cluster.url}/api/v1/namespaces/${ns}/pods${q}`, { method: "POST", headers: { "content-type": "application/json" }, body });
    const strict = await post("?fieldValidation=Strict");
    expect(strict.status).toBe(400);
    expect(((await strict.json()) as { message: string }).message).toBe(
      'Pod in version "v1" cannot be handled as a Pod: strict decoding error: unknown field "metadata.labelz", unknown field "spec.containers[0].imagee"',
    );
    const warned = await post("");
    expect(warned.status).toBe(201);
    expect(warned.headers.get("warning")).toBe('299 - "unknown field \\"metadata.labelz\\"", 299 - "unknown field \\"spec.containers[0].imagee\\""');
    const stored = await c.core.readNamespacedPod({ name: "typo", namespace: ns });
    expect(stored.spec?.containers[0]).not.toHaveProperty("imagee");
  });

  it("names objects from generateName", async () => {
    const ns = await freshNamespace(c);
    const a = await c.core.createNamespacedConfigMap({ namespace: ns, body: { metadata: { generateName: "gen-" } } });
    const b = await c.core.createNamespacedConfigMap({ namespace: ns, body: { metadata: { generateName: "gen-" } } });
    expect(a.metadata?.name).toMatch(/^gen-[a-z0-9]{5}$/);
    expect(b.metadata?.name).not.toBe(a.metadata?.name);
  });

  it("filters lists by label and field selectors, and refuses unsupported fields", async () => {
    const ns = await freshNamespace(c);
    for (const [name, tier] of [["a", "web"], ["b", "db"], ["c", "web"]] as const) {
      await c.core.createNamespacedConfigMap({ namespace: ns, body: { metadata: { name, labels: { tier, app: "x" } } } });
    }
    const names = async (q: { labelSelector?: string; fieldSelector?: string }) => (await c.core.listNamespacedConfigMap({ namespace: ns, ...q })).items.map((i) => i.metadata?.name);
    expect(await names({ labelSelector: "tier=web" })).toEqual(["a", "c"]);
    expect(await names({ labelSelector: "tier in (db),app" })).toEqual(["b"]);
    expect(await names({ labelSelector: "tier!=web" })).toEqual(["b"]);
    expect(await names({ labelSelector: "!missing" })).toEqual(["a", "b", "c"]);
    expect(await names({ fieldSelector: "metadata.name=c" })).toEqual(["c"]);
    const bad = await statusOf(c.core.listNamespacedConfigMap({ namespace: ns, fieldSelector: "spec.nope=1" }));
    expect(bad).toMatchObject({ code: 400, reason: "BadRequest", message: "field label not supported: spec.nope" });
  });

  it("pages lists with limit and continue", async () => {
    const ns = await freshNamespace(c);
    for (let i = 0; i < 5; i++) await c.core.createNamespacedConfigMap({ namespace: ns, body: { metadata: { name: `cm${i}` } } });
    const first = await c.core.listNamespacedConfigMap({ namespace: ns, limit: 2 });
    expect(first.items).toHaveLength(2);
    expect(first.metadata?.remainingItemCount).toBe(3);
    const second = await c.core.listNamespacedConfigMap({ namespace: ns, limit: 10, _continue: first.metadata?._continue });
    expect(second.items.map((i) => i.metadata?.name)).toEqual(["cm2", "cm3", "cm4"]);
  });

  it("applies merge, JSON and strategic merge patches", async () => {
    const ns = await freshNamespace(c);
    await c.core.createNamespacedConfigMap({ namespace: ns, body: { metadata: { name: "p", labels: { a: "1" } }, data: { x: "1" } } });
    const merged = await c.core.patchNamespacedConfigMap(
      { name: "p", namespace: ns, body: { metadata: { labels: { b: "2" } }, data: { x: null, y: "2" } } },
      setHeaderOptions("Content-Type", PatchStrategy.MergePatch),
    );
    expect(merged.metadata?.labels).toEqual({ a: "1", b: "2" });
    expect(merged.data).toEqual({ y: "2" });
    const jsonPatched = await c.core.patchNamespacedConfigMap(
      { name: "p", namespace: ns, body: [{ op: "add", path: "/data/z", value: "3" }] },
      setHeaderOptions("Content-Type", PatchStrategy.JsonPatch),
    );
    expect(jsonPatched.data).toEqual({ y: "2", z: "3" });
    await c.core.createNamespacedService({ namespace: ns, body: { metadata: { name: "svc" }, spec: { ports: [{ name: "a", port: 80 }, { name: "b", port: 81 }] } } });
    const svc = await c.core.patchNamespacedService(
      { name: "svc", namespace: ns, body: { spec: { ports: [{ name: "b", port: 82 }] } } },
      setHeaderOptions("Content-Type", PatchStrategy.StrategicMergePatch),
    );
    expect(svc.spec?.ports?.map((p) => [p.name, p.port])).toEqual([["a", 80], ["b", 82]]);
  });

  it("lets a pod update change metadata and the deadline whatever order its keys are written in, and nothing else of the spec", async () => {
    const ns = await freshNamespace(c);
    await c.core.createNamespacedPod({ namespace: ns, body: pod("upd", { spec: { activeDeadlineSeconds: 600 } }) });
    // The spec's keys in reverse order, as another client may serialise them. The kubelet may
    // write the pod's status between the read and the update (a 409): read again, as a client does.
    const claim = async (): Promise<V1Pod> => {
      const current = await c.core.readNamespacedPod({ name: "upd", namespace: ns });
      const reversed = Object.fromEntries(Object.entries(current.spec!).reverse()) as typeof current.spec;
      const body = { ...current, metadata: { ...current.metadata, labels: { claimed: "yes" } }, spec: { ...reversed!, activeDeadlineSeconds: 300 } };
      return c.core.replaceNamespacedPod({ name: "upd", namespace: ns, body }).catch((error: { code?: number }) => {
        if (error.code === 409) return claim();
        throw error;
      });
    };
    const updated = await claim();
    expect(updated.metadata?.labels).toEqual({ claimed: "yes" });
    expect(updated.spec?.activeDeadlineSeconds).toBe(300);
    // Unconditional (no resourceVersion: pods allow it), so a status write meanwhile is no 409.
    const { resourceVersion: _unconditional, ...metadata } = updated.metadata!;
    const refused = await statusOf(c.core.replaceNamespacedPod({ name: "upd", namespace: ns, body: { ...updated, metadata, spec: { ...updated.spec!, restartPolicy: "Always" } } }));
    expect(refused).toMatchObject({ code: 422, reason: "Invalid" });
  });

  it("fills in what the apiserver defaults: service cluster IPs, pod pending status, job selectors", async () => {
    const ns = await freshNamespace(c);
    const svc = await c.core.createNamespacedService({ namespace: ns, body: { metadata: { name: "web" }, spec: { selector: { a: "b" }, ports: [{ port: 8080 }] } } });
    expect(svc.spec?.clusterIP).toMatch(/^10\.96\./);
    expect(svc.spec?.ports?.[0]).toMatchObject({ protocol: "TCP", targetPort: 8080 });
    // Replacing with an empty clusterIP keeps the allocated one (as since Kubernetes 1.20).
    const replaced = await c.core.replaceNamespacedService({ name: "web", namespace: ns, body: { ...svc, spec: { ...svc.spec, clusterIP: "", clusterIPs: [] } } });
    expect(replaced.spec?.clusterIP).toBe(svc.spec?.clusterIP);
    const p = await c.core.createNamespacedPod({ namespace: ns, body: pod("p", { annotations: { "sim.k8s-runner.dev/start-delay-ms": "60000" } }) });
    expect(p.status?.phase).toBe("Pending");
    expect(p.spec?.containers[0]?.imagePullPolicy).toBe("IfNotPresent");
    expect(p.spec?.terminationGracePeriodSeconds).toBe(30);
  });

  it("refuses objects in missing or terminating namespaces", async () => {
    const missing = await statusOf(c.core.createNamespacedConfigMap({ namespace: "nope", body: { metadata: { name: "x" } } }));
    expect(missing).toMatchObject({ code: 404, reason: "NotFound", message: 'namespaces "nope" not found' });
  });

  it("has one Ready node that pods are bound to", async () => {
    const nodes = await c.core.listNode();
    expect(nodes.items.map((n) => n.metadata?.name)).toEqual(["sim-node"]);
    expect(nodes.items[0]!.status?.conditions?.find((x) => x.type === "Ready")?.status).toBe("True");
  });

  it("answers 404 for resources it does not serve, as a cluster without them does", async () => {
    const res = await statusOf(c.apps.listNamespacedDeployment({ namespace: "default" }));
    expect(res.code).toBe(404);
  });
});
