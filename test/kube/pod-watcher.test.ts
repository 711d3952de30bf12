/**
 * The shared pod watch against the simulated cluster when the apiserver refuses the watch itself
 * (a 403 or 500 answer, not an in-stream 410): each refusal relists after a backoff that doubles,
 * instead of listing and watching again at once, and the watch recovers once it is served.
 */
import { describe, expect, it } from "vitest";
import { kubeApi } from "../../src/kube/api.ts";
import { PodWatcher } from "../../src/kube/pod-watcher.ts";
import { createLogger } from "../../src/log.ts";
import { freshNamespace, pod, useCluster } from "../sim/helpers.ts";
import { waitFor } from "../support/wait.ts";

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
