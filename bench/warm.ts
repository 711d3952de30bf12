/**
 * Section 8, warm start (docs/kubernetes.md "Warm pool"): `POST /v1/sessions` → `running` with the warm pool on and
 * the simulated kubelet taking 1 s per container start (as a kubelet with a cached image
 * does), next to the direct baseline in the same run: the runner's cold run pod for the same
 * session created with client-node and watched to Running. Runner and baseline alternate, one
 * at a time; before each runner sample the pool has a ready pod, as a pool sized for its
 * arrival rate has (the wait is not timed).
 */
import { runPod } from "../src/kube/specs/run-pod.ts";
import { sessionBody } from "../test/support/session-body.ts";
import { waitFor } from "../test/support/wait.ts";
import { scrape, valueOf } from "../test/support/metrics.ts";
import type { Row } from "./support/report.ts";
import { type EntryMode, SESSION_NAMESPACE, startBenchRunner } from "./support/runner.ts";
import { clearDirectPods, directStart, startSession, stopSessions } from "./support/sessions.ts";
import { ratio, summarize } from "./support/stats.ts";

export type WarmOptions = { samples: number; poolSize: number; podStartDelayMs: number };

export const WARM_FULL: WarmOptions = { samples: 40, poolSize: 2, podStartDelayMs: 1000 };
export const WARM_QUICK: WarmOptions = { samples: 5, poolSize: 2, podStartDelayMs: 1000 };

const SECTION = "8 warm start";

export async function runWarmBench(mode: EntryMode, options: WarmOptions): Promise<Row[]> {
  const runner = await startBenchRunner({ mode, env: { RUNNER_WARM_POOL_SIZE: String(options.poolSize) }, podStartDelayMs: options.podStartDelayMs });
  try {
    const { client, core, kubeConfig, baseUrl } = runner;
    const metric = async (name: string, labels: Record<string, string>) => valueOf(await scrape(baseUrl), name, labels);
    const poolReady = () => waitFor("a ready pool pod", async () => (await metric("runner_warm_pool_pods", { state: "ready" })) >= 1 || undefined, 60_000);
    // The cold pod the runner would create for this session: what the baseline creates.
    const template = runPod({
      session: { sessionId: "benchwarmaaa", mode: "run", createdAt: new Date().toISOString(), apps: [{ name: "app", entryRelativePath: "telo.yaml", ports: [], io: "tty" }], inspect: false, selfContained: false, config: {} },
      env: {},
      settings: { namespace: SESSION_NAMESPACE, managedBy: "telo-k8s-runner", ownerId: "default", initImage: "busybox:stable", imagePullSecret: undefined, runtimeClass: undefined },
      limits: { cpu: "500m", memory: "512Mi", ephemeralStorage: "1Gi", ttlSeconds: 3600 },
      defaultImage: "telorun/node:latest-slim",
      bundleUrl: "http://unused/internal/bundles/x?token=x",
    });

    const warmBefore = await metric("runner_warm_pool_starts_total", { start: "warm" });
    const runnerMs: number[] = [];
    const directMs: number[] = [];
    const ids: string[] = [];
    for (let i = 0; i < options.samples; i++) {
      await poolReady();
      const started = await startSession(client, sessionBody());
      runnerMs.push(started.ms);
      ids.push(started.sessionId);
      directMs.push(await directStart(kubeConfig, core, template, `bench-warm-direct-${i.toString(36)}`));
    }
    const warm = (await metric("runner_warm_pool_starts_total", { start: "warm" })) - warmBefore;
    await stopSessions(client, core, ids);
    await clearDirectPods(core);

    const r = summarize(runnerMs);
    const d = summarize(directMs);
    const p50 = ratio(r.median, d.median);
    const p99 = ratio(r.p99, d.p99);
    const note = `pool of ${options.poolSize}, ${options.podStartDelayMs} ms per simulated container start (the cold pod's init container and its session container each take it)`;
    return [
      { section: SECTION, metric: "POST→running, warm pool, one at a time (p50)", value: r, unit: "ms", baseline: d, ratio: p50, compare: "p50", target: "≤ 0.5× p50", verdict: p50 <= 0.5 ? "met" : "MISSED", note },
      { section: SECTION, metric: "POST→running, warm pool, one at a time (p99)", value: r, unit: "ms", baseline: d, ratio: p99, compare: "p99", target: "≤ 0.7× p99", verdict: p99 <= 0.7 ? "met" : "MISSED" },
      { section: SECTION, metric: "  starts served by a pool pod", value: warm, unit: `of ${options.samples}` },
    ];
  } finally {
    await runner.close();
  }
}
