/**
 * Sections 1 and 2 (start side): start overhead — `POST /v1/sessions` to the `running` event,
 * one at a time and N at once — next to the direct baseline (the same pod created with
 * client-node and watched to Running), interleaved round by round so both see the same
 * machine; then the Kubernetes requests one start and one stop cost, from the simulated
 * cluster's counters.
 */
import { type V1Pod, Watch } from "@kubernetes/client-node";
import { runPodName } from "../src/kube/specs/names.ts";
import type { Row } from "./support/report.ts";
import { type BenchRunner, SESSION_NAMESPACE } from "./support/runner.ts";
import { clearDirectPods, directStart, quiesce, sampleStarts, sessionPod, startSession, stopSessions } from "./support/sessions.ts";
import { ratio, summarize } from "./support/stats.ts";

export type StartOptions = { sequential: number; concurrent: number; rounds: number; costSamples: number };

export const START_FULL: StartOptions = { sequential: 100, concurrent: 50, rounds: 4, costSamples: 20 };
export const START_QUICK: StartOptions = { sequential: 10, concurrent: 10, rounds: 1, costSamples: 3 };

let directSerial = 0;
const directName = () => `bench-direct-${(directSerial++).toString(36)}`;

export async function runStartBench(runner: BenchRunner, options: StartOptions): Promise<Row[]> {
  const { client, core, kubeConfig } = runner;

  // Warm-up (JIT, connection pools, the informer's first events), discarded; it also yields
  // the pod spec the runner writes, which the baseline creates as its own.
  const warm: string[] = [];
  for (let i = 0; i < 3; i++) warm.push((await startSession(client)).sessionId);
  const template: V1Pod = await sessionPod(core, warm[0]!);
  for (let i = 0; i < 3; i++) await directStart(kubeConfig, core, template, directName());
  await stopSessions(client, core, warm);
  await clearDirectPods(core);

  const { seqRunner, seqDirect, conRunner, conDirect } = await sampleStarts(runner, template, directName, options);

  const rows: Row[] = [];
  const section = "1 start overhead";
  const seqR = summarize(seqRunner);
  const seqD = summarize(seqDirect);
  const conR = summarize(conRunner);
  const conD = summarize(conDirect);
  const conRatio = ratio(conR.p99, conD.p99);
  rows.push(
    { section, metric: "POST→running, one at a time (p50)", value: seqR, unit: "ms", baseline: seqD, ratio: ratio(seqR.median, seqD.median), compare: "p50" },
    { section, metric: "POST→running, one at a time (p99)", value: seqR, unit: "ms", baseline: seqD, ratio: ratio(seqR.p99, seqD.p99), compare: "p99" },
    { section, metric: `POST→running, ${options.concurrent} at once (p50)`, value: conR, unit: "ms", baseline: conD, ratio: ratio(conR.median, conD.median), compare: "p50" },
    {
      section,
      metric: `POST→running, ${options.concurrent} at once (p99)`,
      value: conR,
      unit: "ms",
      baseline: conD,
      ratio: conRatio,
      compare: "p99",
      // The target is stated for 50 at once; a quick run's smaller burst is not judged.
      ...(options.concurrent >= 50 && { target: "≤ 1.5× p99 (50 at once)", verdict: conRatio <= 1.5 ? "met" : "MISSED" }),
    },
  );

  rows.push(...(await breakdown(runner, options.concurrent)));

  // Section 2, start and stop cost: nothing else talks to the cluster meanwhile (the bench
  // waits on the runner's own event stream, which is no Kubernetes call), and each phase
  // begins and ends when the cluster has been quiet for a while (the attach follows
  // `running`; an ended pod's DELETE may follow a stop's answer).
  await quiesce(runner.sim);
  runner.sim.resetCounters();
  const costIds: string[] = [];
  for (let i = 0; i < options.costSamples; i++) costIds.push((await startSession(client)).sessionId);
  await quiesce(runner.sim);
  const startCounts = runner.sim.counters().requests;
  runner.sim.resetCounters();
  for (const id of costIds) await client.deleteSession(id);
  await quiesce(runner.sim);
  const stopCounts = runner.sim.counters().requests;
  await stopSessions(client, core, costIds);

  const perOp = (counts: Record<string, number>) => Object.values(counts).reduce((a, b) => a + b, 0) / options.costSamples;
  const startTotal = perOp(startCounts);
  const cost = "2 API requests";
  rows.push({
    section: cost,
    metric: "per start, all verbs (plain run session)",
    value: startTotal,
    unit: "requests",
    target: "≤ 6",
    verdict: startTotal <= 6 ? "met" : "MISSED",
  });
  for (const [key, n] of Object.entries(startCounts).sort()) rows.push({ section: cost, metric: `  per start: ${key}`, value: n / options.costSamples, unit: "requests" });
  rows.push({ section: cost, metric: "per stop, all verbs", value: perOp(stopCounts), unit: "requests" });
  for (const [key, n] of Object.entries(stopCounts).sort()) rows.push({ section: cost, metric: `  per stop: ${key}`, value: n / options.costSamples, unit: "requests" });
  return rows;
}


/**
 * Where the time of N concurrent starts goes, from one extra round outside the timed ones
 * (it watches the namespace itself, which the timed rounds must not pay for): POST → 201,
 * → the pod exists in the cluster, → the pod is Running there, → the `running` event.
 */
async function breakdown(runner: BenchRunner, concurrent: number): Promise<Row[]> {
  const seen = new Map<string, { added?: number; running?: number }>();
  const abort = await new Watch(runner.kubeConfig).watch(
    `/api/v1/namespaces/${SESSION_NAMESPACE}/pods`,
    {},
    (type: string, pod: V1Pod) => {
      const name = pod.metadata?.name ?? "";
      const entry = seen.get(name) ?? {};
      seen.set(name, entry);
      if (type === "ADDED") entry.added ??= performance.now();
      if (pod.status?.phase === "Running") entry.running ??= performance.now();
    },
    () => undefined,
  );
  try {
    const started = await Promise.all(Array.from({ length: concurrent }, () => startSession(runner.client)));
    const phase = (pick: (s: (typeof started)[number]) => number) => summarize(started.map(pick));
    const at = (s: (typeof started)[number], key: "added" | "running") => (seen.get(runPodName(s.sessionId))?.[key] ?? Number.NaN) - s.startedAt;
    const section = "1 start overhead";
    const rows: Row[] = [
      { section, metric: `  breakdown, ${concurrent} at once: POST → 201`, value: phase((s) => s.createdMs), unit: "ms" },
      { section, metric: "  breakdown: POST → pod created in cluster", value: phase((s) => at(s, "added")), unit: "ms" },
      { section, metric: "  breakdown: POST → pod Running in cluster", value: phase((s) => at(s, "running")), unit: "ms" },
      { section, metric: "  breakdown: pod Running → `running` event", value: phase((s) => s.ms - at(s, "running")), unit: "ms" },
    ];
    await stopSessions(runner.client, runner.core, started.map((s) => s.sessionId));
    return rows;
  } finally {
    abort.abort();
  }
}
