/**
 * The shared pod watch against the simulated cluster when the apiserver refuses the watch itself
 * (a 403 or 500 answer, not an in-stream 410): each refusal relists after a backoff that doubles,
 * instead of listing and watching again at once, and the watch recovers once it is served.
 */
import { describe, expect, it } from "vitest";
import { kubeApi } from "../../../src/kube/cluster/api.ts";
import { PodWatcher } from "../../../src/kube/cluster/pod-watcher.ts";
import { DEFAULT_OWNER_ID } from "../../../src/config/owner.ts";
import { ownedObjects } from "../../../src/kube/specs/names.ts";
import { createLogger } from "../../../src/log.ts";
import { freshNamespace, pod, useCluster } from "../../sim/helpers.ts";
import { waitFor } from "../../support/wait.ts";

const c = useCluster();

describe("pod watcher", () => {
  it("backs off, doubling, while the watch is refused, and recovers when it is served", async () => {
    const ns = await freshNamespace(c);
    const lines: { message: string; retryInMs?: number }[] = [];
    const log = createLogger("test", "warn", (line) => lines.push(JSON.parse(line)));
    const refusals = 4;
    c.cluster.faults.failNext({ verb: "watch", resource: "pods", code: 403, count: refusals });
    const listsBefore = c.cluster.counters().requests["list pods"] ?? 0;
    const watcher = new PodWatcher(kubeApi(c.kc), { namespace: ns, labelSelector: "app=watched", minBackoffMs: 20 }, log);
    watcher.start();
    const refused = () => lines.filter((line) => line.message === "session pod watch failed; relisting");
    try {
      await waitFor("every refusal", () => refused().length === refusals);
      expect(refused().map((line) => line.retryInMs)).toEqual([20, 40, 80, 160]);
      // The watch now served delivers a new pod.
      await c.core.createNamespacedPod({ namespace: ns, body: pod("watched", { labels: { app: "watched" }, container: { stdin: true } }) });
      await waitFor("the watcher sees its pod", () => watcher.get("watched"));
      expect(refused()).toHaveLength(refusals);
      // One list at the start, one after each refusal.
      expect((c.cluster.counters().requests["list pods"] ?? 0) - listsBefore).toBe(refusals + 1);
    } finally {
      watcher.stop();
    }
  });
});

describe("pod watcher cache", () => {
  it("keeps each pod trimmed to what the supervisor reads, from the list and from the watch alike", async () => {
    const ns = await freshNamespace(c);
    const log = createLogger("test", "warn", () => undefined);
    const managedFields = [{ manager: "kubectl", operation: "Update", apiVersion: "v1", fieldsType: "FieldsV1", fieldsV1: { "f:metadata": {} } }];
    const heavy = (name: string) => {
      const body = pod(name, {
        labels: { app: "trimmed" },
        annotations: { "telo.run/session": "{}" },
        container: {
          command: ["sleep", "3600"],
          env: [{ name: "GREETING", value: "hello" }],
          ports: [{ containerPort: 8080, protocol: "TCP" }],
          resources: { limits: { cpu: "1", memory: "256Mi" } },
          securityContext: { allowPrivilegeEscalation: false, readOnlyRootFilesystem: true },
        },
        spec: { initContainers: [{ name: "fetch", image: "busybox:1.36", command: ["true"] }], volumes: [{ name: "scratch", emptyDir: {} }] },
      });
      return { ...body, metadata: { ...body.metadata, managedFields } };
    };
    // One pod exists before the watcher starts (it comes from the list), one after (from the watch).
    const stored = await c.core.createNamespacedPod({ namespace: ns, body: heavy("listed") });
    const watcher = new PodWatcher(kubeApi(c.kc), { namespace: ns, labelSelector: "app=trimmed" }, log);
    const seen: unknown[] = [];
    watcher.subscribe("watched", (update) => seen.push(update));
    watcher.start();
    try {
      await watcher.ready;
      await c.core.createNamespacedPod({ namespace: ns, body: heavy("watched") });
      await waitFor("both pods Running in the cache", () => ["listed", "watched"].every((name) => watcher.get(name)?.status?.phase === "Running"));
      for (const name of ["listed", "watched"]) {
        const cached = watcher.get(name)!;
        expect(cached.metadata).toMatchObject({ name, namespace: ns, labels: { app: "trimmed" }, annotations: { "telo.run/session": "{}" } });
        expect(cached.metadata?.uid).toBeTruthy();
        expect(cached.metadata?.resourceVersion).toBeTruthy();
        expect(cached.metadata).not.toHaveProperty("managedFields");
        expect(cached.spec).toEqual({
          nodeName: expect.any(String),
          containers: [{ name: "main", image: "busybox:1.36", env: [{ name: "GREETING", value: "hello" }], ports: [expect.objectContaining({ containerPort: 8080 })] }],
        });
        expect(cached.status?.containerStatuses?.[0]?.state?.running).toBeDefined();
      }
      // Subscribers get the same trimmed copy the cache holds.
      expect(seen.at(-1)).toBe(watcher.get("watched"));
      // The stored pod itself is whole: only the cache is trimmed.
      expect(stored.spec?.containers[0]?.command).toEqual(["sleep", "3600"]);
      expect(stored.metadata?.managedFields).toHaveLength(1);
    } finally {
      watcher.stop();
    }
  });
});

describe("pod watcher of one runner identity", () => {
  it("holds the default identity's pods and unlabelled ones, never a named identity's, from the list and the watch alike", async () => {
    const ns = await freshNamespace(c);
    const log = createLogger("test", "warn", () => undefined);
    const install = { "app.kubernetes.io/managed-by": "telo-k8s-runner" };
    const withOwner = (name: string, owner: string | undefined) =>
      pod(name, { labels: { ...install, ...(owner !== undefined && { "telo.run/owner": owner }) }, container: { stdin: true } });
    await c.core.createNamespacedPod({ namespace: ns, body: withOwner("listed-default", "default") });
    await c.core.createNamespacedPod({ namespace: ns, body: withOwner("listed-unlabelled", undefined) });
    await c.core.createNamespacedPod({ namespace: ns, body: withOwner("listed-other", "runner-b") });
    const watcher = new PodWatcher(kubeApi(c.kc), { namespace: ns, ...ownedObjects({ managedBy: "telo-k8s-runner", ownerId: DEFAULT_OWNER_ID }) }, log);
    const seenOther: unknown[] = [];
    watcher.subscribe("watched-other", (update) => seenOther.push(update));
    watcher.start();
    try {
      await watcher.ready;
      await c.core.createNamespacedPod({ namespace: ns, body: withOwner("watched-other", "runner-b") });
      await c.core.createNamespacedPod({ namespace: ns, body: withOwner("watched-unlabelled", undefined) });
      // The watch delivers in order: once the later pod is in, the earlier one was seen and dropped.
      await waitFor("the watched unlabelled pod", () => watcher.get("watched-unlabelled"));
      expect(watcher.pods().map((cached) => cached.metadata?.name).sort()).toEqual(["listed-default", "listed-unlabelled", "watched-unlabelled"]);
      expect(seenOther).toEqual([]);
    } finally {
      watcher.stop();
    }
  });
});
