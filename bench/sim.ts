// Simulated cluster at size: 2,000 pods and 2,000 concurrent watchers on one machine. Reports
// memory and latency figures; `quick` shrinks the sizes for a smoke run.
import { CoreV1Api, Watch } from "@kubernetes/client-node";
import { startSimulatedCluster } from "../src/sim/index.ts";

function percentile(sorted: number[], p: number): number {
  if (sorted.length === 0) return 0;
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;
}

async function inBatches<T>(items: T[], size: number, fn: (item: T) => Promise<void>): Promise<void> {
  for (let i = 0; i < items.length; i += size) await Promise.all(items.slice(i, i + size).map(fn));
}

const round = (n: number) => Math.round(n * 100) / 100;
const mib = (n: number) => round(n / (1024 * 1024));

export async function runSimBench(options: { quick: boolean }): Promise<Record<string, number | string>> {
  const pods = options.quick ? 200 : 2000;
  const watchers = options.quick ? 200 : 2000;
  const cluster = await startSimulatedCluster({ podStartDelayMs: 0 });
  const kc = cluster.kubeConfig();
  const core = kc.makeApiClient(CoreV1Api);
  const ns = "bench";
  const aborts: AbortController[] = [];
  try {
    await core.createNamespace({ body: { metadata: { name: ns } } });
    global.gc?.();
    const heapBefore = process.memoryUsage().heapUsed;

    const createMs: number[] = [];
    const names = Array.from({ length: pods }, (_, i) => `bench-${i}`);
    const createStart = performance.now();
    await inBatches(names, 50, async (name) => {
      const t = performance.now();
      await core.createNamespacedPod({
        namespace: ns,
        body: { metadata: { name, labels: { bench: "yes" } }, spec: { restartPolicy: "Never", containers: [{ name: "main", image: "busybox:1.36", stdin: true }] } },
      });
      createMs.push(performance.now() - t);
    });
    const createTotal = performance.now() - createStart;

    // Wait for every pod to be Running, by listing (no sleeps: poll).
    const runningStart = performance.now();
    for (;;) {
      const list = await core.listNamespacedPod({ namespace: ns, fieldSelector: "status.phase=Running" });
      if (list.items.length === pods) break;
      await new Promise((r) => setTimeout(r, 50));
    }
    const allRunningMs = performance.now() - runningStart;

    const listMs: number[] = [];
    let listRv = "";
    for (let i = 0; i < 5; i++) {
      const t = performance.now();
      listRv = (await core.listNamespacedPod({ namespace: ns })).metadata!.resourceVersion!;
      listMs.push(performance.now() - t);
    }

    // One watcher per pod, each pinned by field selector as a per-session watch would be.
    const deleted = new Set<string>();
    let allDeleted: () => void = () => {};
    const done = new Promise<void>((resolve) => (allDeleted = resolve));
    const watchStart = performance.now();
    await inBatches(names.slice(0, watchers), 100, async (name) => {
      const ac = await new Watch(kc).watch(
        `/api/v1/namespaces/${ns}/pods`,
        { fieldSelector: `metadata.name=${name}`, resourceVersion: listRv, allowWatchBookmarks: true },
        (type, obj) => {
          if (type === "DELETED") {
            deleted.add(obj.metadata.name);
            if (deleted.size === watchers) allDeleted();
          }
        },
        () => {},
      );
      aborts.push(ac);
    });
    const watchOpenMs = performance.now() - watchStart;
    const openWatches = cluster.counters().openWatches;
    global.gc?.();
    const mem = process.memoryUsage();

    // Fan-out: every pod goes at once; each watcher must see its own DELETED.
    const fanStart = performance.now();
    await core.deleteCollectionNamespacedPod({ namespace: ns, gracePeriodSeconds: 0 });
    await done;
    const fanOutMs = performance.now() - fanStart;

    createMs.sort((a, b) => a - b);
    listMs.sort((a, b) => a - b);
    return {
      "sim pods": pods,
      "sim watchers open": openWatches,
      "sim pod create p50 ms": round(percentile(createMs, 50)),
      "sim pod create p99 ms": round(percentile(createMs, 99)),
      "sim pod creates per s": round((pods / createTotal) * 1000),
      "sim all pods Running ms": round(allRunningMs),
      [`sim list ${pods} pods p50 ms`]: round(percentile(listMs, 50)),
      [`sim open ${watchers} watches ms`]: round(watchOpenMs),
      [`sim delete-all fan-out to ${watchers} watchers ms`]: round(fanOutMs),
      "sim heap growth MiB": mib(mem.heapUsed - heapBefore),
      "sim rss MiB": mib(mem.rss),
    };
  } finally {
    for (const a of aborts) a.abort();
    await cluster.stop();
  }
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const result = await runSimBench({ quick: process.argv.includes("--quick") });
  console.table(result);
}
