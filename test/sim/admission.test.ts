// What the simulated apiserver refuses and cleans up: official-schema validation (422), Pod
// Security admission (403 with the plugin's message), ResourceQuota (403), garbage collection by
// ownerReference, and namespace deletion.
import { describe, expect, it } from "vitest";
import { freshNamespace, pod, statusOf, useCluster } from "./helpers.ts";
import { waitFor } from "../support/wait.ts";

const c = useCluster();

/** The run pod the runner creates (docs/kubernetes.md "Run pods"), trimmed to what admission looks at. */
function runPod(name: string, hardened = true) {
  const sc = { allowPrivilegeEscalation: false, readOnlyRootFilesystem: true, runAsNonRoot: true, capabilities: { drop: ["ALL"] } };
  return {
    metadata: { name, labels: { "app.kubernetes.io/managed-by": "telo-k8s-runner" } },
    spec: {
      restartPolicy: "Never",
      automountServiceAccountToken: false,
      securityContext: { runAsNonRoot: true, runAsUser: 1000, runAsGroup: 1000, fsGroup: 1000, seccompProfile: { type: "RuntimeDefault" } },
      initContainers: [{ name: "body-fetch", image: "busybox:stable", command: ["sh", "-c"], args: ["true"], securityContext: sc }],
      containers: [
        {
          name: "session",
          image: "telorun/node:latest-slim",
          stdin: true,
          tty: true,
          resources: { limits: { cpu: "500m", memory: "512Mi", "ephemeral-storage": "1Gi" }, requests: { cpu: "500m", memory: "512Mi" } },
          securityContext: hardened ? sc : { readOnlyRootFilesystem: true },
        },
      ],
    },
  };
}

const ns404 = (p: Promise<unknown>) => statusOf(p).then((s) => s.code);

describe("admission", () => {
  it("admits the runner's hardened pod under restricted and refuses a violating one with 403", async () => {
    const ns = await freshNamespace(c, { "pod-security.kubernetes.io/enforce": "restricted" });
    await c.core.createNamespacedPod({ namespace: ns, body: runPod("ok") });
    const refused = await statusOf(c.core.createNamespacedPod({ namespace: ns, body: runPod("bad", false) }));
    expect(refused.code).toBe(403);
    expect(refused.reason).toBe("Forbidden");
    expect(refused.details).toEqual({ name: "bad", kind: "pods" });
    expect(refused.message).toMatch(/^pods "bad" is forbidden: violates PodSecurity "restricted:latest": /);
    expect(refused.message).toContain('allowPrivilegeEscalation != false (container "session" must set securityContext.allowPrivilegeEscalation=false)');
  });

  it("warns under pod-security.kubernetes.io/warn without refusing", async () => {
    const ns = await freshNamespace(c, { "pod-security.kubernetes.io/warn": "restricted" });
    const res = await fetch(`${c.cluster.url}/api/v1/namespaces/${ns}/pods`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(pod("loose")) });
    expect(res.status).toBe(201);
    expect(res.headers.get("warning")).toMatch(/^299 - "would violate PodSecurity \\"restricted:latest\\": allowPrivilegeEscalation != false/);
  });

  it("applies the baseline level: privileged containers are refused, unhardened ones admitted", async () => {
    const ns = await freshNamespace(c, { "pod-security.kubernetes.io/enforce": "baseline" });
    await c.core.createNamespacedPod({ namespace: ns, body: pod("plain") });
    const refused = await statusOf(c.core.createNamespacedPod({ namespace: ns, body: pod("priv", { container: { securityContext: { privileged: true } } }) }));
    expect(refused.code).toBe(403);
    expect(refused.message).toMatch(/^pods "priv" is forbidden: violates PodSecurity "baseline:latest": privileged/);
  });

  it("refuses objects that break the official schema or naming rules with 422 Invalid", async () => {
    const ns = await freshNamespace(c);
    const wrongType = await statusOf(
      c.core.createNamespacedPod({ namespace: ns, body: pod("x", { container: { ports: [{ containerPort: "http" as unknown as number }] } }) }),
    );
    expect(wrongType.code).toBe(422);
    expect(wrongType.reason).toBe("Invalid");
    expect(wrongType.message).toMatch(/^Pod "x" is invalid: /);
    expect((wrongType.details?.causes as { field: string }[])[0]!.field).toContain("containerPort");

    const noImage = await statusOf(c.core.createNamespacedPod({ namespace: ns, body: { metadata: { name: "y" }, spec: { containers: [{ name: "c" }] } } as never }));
    expect(noImage).toMatchObject({ code: 422, message: 'Pod "y" is invalid: spec.containers[0].image: Required value' });

    const badName = await statusOf(c.core.createNamespacedConfigMap({ namespace: ns, body: { metadata: { name: "Bad_Name" } } }));
    expect(badName.code).toBe(422);
    expect(badName.message).toContain('metadata.name: Invalid value: "Bad_Name": a lowercase RFC 1123 subdomain');

    const badIngress = await statusOf(
      c.networking.createNamespacedIngress({ namespace: ns, body: { metadata: { name: "i" }, spec: { rules: [{ http: { paths: [{ path: "/", pathType: "Prefix" }] } }] } } as never }),
    );
    expect(badIngress.code).toBe(422);
    expect(badIngress.message).toMatch(/^Ingress.networking.k8s.io "i" is invalid: /);
  });

  it("enforces ResourceQuota with the quota plugin's messages and keeps status.used current", async () => {
    const ns = await freshNamespace(c);
    await c.core.createNamespacedResourceQuota({ namespace: ns, body: { metadata: { name: "q" }, spec: { hard: { pods: "1", "limits.memory": "1Gi" } } } });
    const missing = await statusOf(c.core.createNamespacedPod({ namespace: ns, body: pod("nolimits", { container: { stdin: true } }) }));
    expect(missing).toMatchObject({ code: 403, message: 'pods "nolimits" is forbidden: failed quota: q: must specify limits.memory for: main' });
    const limited = (name: string) => pod(name, { container: { stdin: true, resources: { limits: { memory: "512Mi" } } } });
    await c.core.createNamespacedPod({ namespace: ns, body: limited("one") });
    const over = await statusOf(c.core.createNamespacedPod({ namespace: ns, body: limited("two") }));
    expect(over).toMatchObject({ code: 403, reason: "Forbidden", message: 'pods "two" is forbidden: exceeded quota: q, requested: pods=1, used: pods=1, limited: pods=1' });
    const q = await waitFor("quota status", async () => {
      const x = await c.core.readNamespacedResourceQuota({ name: "q", namespace: ns });
      return x.status?.used?.pods === "1" ? x : undefined;
    });
    expect(q.status?.used?.["limits.memory"]).toBe("512Mi");
  });

  it("garbage-collects dependents with their owner, orphans on request, and collects dangling dependents", async () => {
    const ns = await freshNamespace(c);
    const owner = await c.core.createNamespacedPod({ namespace: ns, body: pod("owner", { container: { stdin: true } }) });
    const ref = { apiVersion: "v1", kind: "Pod", name: "owner", uid: owner.metadata!.uid!, controller: true, blockOwnerDeletion: true };
    await c.core.createNamespacedService({ namespace: ns, body: { metadata: { name: "svc", ownerReferences: [ref] }, spec: { ports: [{ port: 80 }] } } });
    await c.core.createNamespacedConfigMap({ namespace: ns, body: { metadata: { name: "cm", ownerReferences: [ref] } } });
    await c.core.deleteNamespacedPod({ name: "owner", namespace: ns, gracePeriodSeconds: 0 });
    await waitFor("dependents collected", async () => (await ns404(c.core.readNamespacedService({ name: "svc", namespace: ns }))) === 404 && (await ns404(c.core.readNamespacedConfigMap({ name: "cm", namespace: ns }))) === 404);

    const owner2 = await c.core.createNamespacedConfigMap({ namespace: ns, body: { metadata: { name: "owner2" } } });
    await c.core.createNamespacedConfigMap({
      namespace: ns,
      body: { metadata: { name: "kept", ownerReferences: [{ apiVersion: "v1", kind: "ConfigMap", name: "owner2", uid: owner2.metadata!.uid! }] } },
    });
    await c.core.deleteNamespacedConfigMap({ name: "owner2", namespace: ns, propagationPolicy: "Orphan" });
    const kept = await waitFor("orphaned", async () => {
      const k = await c.core.readNamespacedConfigMap({ name: "kept", namespace: ns });
      return (await ns404(c.core.readNamespacedConfigMap({ name: "owner2", namespace: ns }))) === 404 ? k : undefined;
    });
    expect(kept.metadata?.ownerReferences).toBeUndefined();

    await c.core.createNamespacedConfigMap({
      namespace: ns,
      body: { metadata: { name: "dangling", ownerReferences: [{ apiVersion: "v1", kind: "Pod", name: "ghost", uid: "00000000-0000-0000-0000-000000000000" }] } },
    });
    await waitFor("dangling collected", async () => (await ns404(c.core.readNamespacedConfigMap({ name: "dangling", namespace: ns }))) === 404);
  });

  it("keeps an object with finalizers until they are removed", async () => {
    const ns = await freshNamespace(c);
    await c.core.createNamespacedConfigMap({ namespace: ns, body: { metadata: { name: "f", finalizers: ["example.com/hold"] } } });
    await c.core.deleteNamespacedConfigMap({ name: "f", namespace: ns });
    const held = await c.core.readNamespacedConfigMap({ name: "f", namespace: ns });
    expect(held.metadata?.deletionTimestamp).toBeTruthy();
    await c.core.replaceNamespacedConfigMap({ name: "f", namespace: ns, body: { ...held, metadata: { ...held.metadata, finalizers: [] } } });
    expect(await ns404(c.core.readNamespacedConfigMap({ name: "f", namespace: ns }))).toBe(404);
  });

  it("drains a deleted namespace: Terminating, contents removed, then gone; new content refused meanwhile", async () => {
    const ns = await freshNamespace(c);
    await c.core.createNamespacedPod({ namespace: ns, body: pod("p", { annotations: { "sim.k8s-runner.dev/ignore-sigterm": "true" }, container: { stdin: true }, spec: { terminationGracePeriodSeconds: 1 } }) });
    await waitFor("running", async () => (await c.core.readNamespacedPod({ name: "p", namespace: ns })).status?.phase === "Running");
    await c.core.deleteNamespace({ name: ns });
    expect((await c.core.readNamespace({ name: ns })).status?.phase).toBe("Terminating");
    const refused = await statusOf(c.core.createNamespacedConfigMap({ namespace: ns, body: { metadata: { name: "late" } } }));
    expect(refused).toMatchObject({ code: 403, message: `configmaps "late" is forbidden: unable to create new content in namespace ${ns} because it is being terminated` });
    await waitFor("namespace gone", async () => (await ns404(c.core.readNamespace({ name: ns }))) === 404);
  });
});
