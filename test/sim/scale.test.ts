// At the size the issue names: 2,000 pods and 2,000 concurrent watchers in one process, every
// watcher receiving its own pod's events, and the API still answering lists and reads.
import { Watch } from "@kubernetes/client-node";
import { describe, expect, it } from "vitest";
import { useCluster } from "./helpers.ts";
import { waitFor } from "../support/wait.ts";

const c = useCluster({ podStartDelayMs: 0 });
const SIZE = 2000;

async function inBatches<T>(items: T[], size: number, fn: (item: T) => Promise<void>): Promise<void> {
  for (let i = 0; i < items.length; i += size) await Promise.all(items.slice(i, i + size).map(fn));
}

describe("simulated cluster at size", () => {
  it(`holds ${SIZE} pods and ${SIZE} concurrent watchers`, { timeout: 240_000 }, async () => {
    const ns = "scale";
    await c.core.createNamespace({ body: { metadata: { name: ns } } });
    const names = Array.from({ length: SIZE }, (_, i) => `p-${i}`);
    await inBatches(names, 50, async (name) => {
      await c.core.createNamespacedPod({ namespace: ns, body: { metadata: { name }, spec: { restartPolicy: "Never", containers: [{ name: "main", image: "busybox:1.36", stdin: true, tty: true }] } } });
    });
    await waitFor("all running", async () => (await c.core.listNamespacedPod({ namespace: ns, fieldSelector: "status.phase=Running" })).items.length === SIZE, 120_000);

    const rv = (await c.core.listNamespacedPod({ namespace: ns })).metadata!.resourceVersion!;
    const seen = new Map<string, string[]>();
    const aborts: AbortController[] = [];
    try {
      await inBatches(names, 100, async (name) => {
        aborts.push(
          await new Watch(c.kc).watch(
            `/api/v1/namespaces/${ns}/pods`,
            { fieldSelector: `metadata.name=${name}`, resourceVersion: rv },
            (type, obj) => seen.set(obj.metadata.name, [...(seen.get(obj.metadata.name) ?? []), `${type} ${obj.status?.phase}`]),
            () => {},
          ),
        );
      });
      await waitFor("all watches registered", () => c.cluster.counters().openWatches >= SIZE, 60_000);

      // Every container exits; every watcher sees its own pod reach Succeeded, and nobody else's.
      for (const name of names) c.cluster.faults.exitPod(ns, name, { exitCode: 0 });
      await waitFor("every watcher saw Succeeded", () => names.every((n) => seen.get(n)?.includes("MODIFIED Succeeded")), 120_000);
      expect([...seen.keys()].sort()).toEqual([...names].sort());

      const list = await c.core.listNamespacedPod({ namespace: ns });
      expect(list.items).toHaveLength(SIZE);
      expect((await c.core.readNamespacedPod({ name: "p-1999", namespace: ns })).status?.phase).toBe("Succeeded");
    } finally {
      for (const a of aborts) a.abort();
    }
    await waitFor("watchers released", () => c.cluster.counters().openWatches === 0, 60_000);
  });
});
