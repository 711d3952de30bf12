/**
 * Section 7, realistic start: the same comparison as section 1, on a simulated kubelet that
 * takes 1 s to start each container (as a kubelet with a cached image does), so the runner's
 * own cost is seen against a pod start of realistic length rather than an instant one. The
 * baseline is the direct client-node start of a copy of the runner's pod, measured in the
 * same run, alternating with the runner.
 */
import type { V1Pod } from "@kubernetes/client-node";
import type { Row } from "./support/report.ts";
import type { BenchRunner } from "./support/runner.ts";
import { clearDirectPods, directStart, sampleStarts, sessionPod, startSession, stopSessions } from "./support/sessions.ts";
import { ratio, summarize } from "./support/stats.ts";

/** The kubelet's start delay this section runs with (startBenchRunner's podStartDelayMs). */
export const REALISTIC_POD_START_MS = 1000;

export type RealisticOptions = { sequential: number; concurrent: number; rounds: number };
export const REALISTIC_FULL: RealisticOptions = { sequential: 30, concurrent: 20, rounds: 3 };
export const REALISTIC_QUICK: RealisticOptions = { sequential: 3, concurrent: 5, rounds: 1 };

const TARGET_RATIO = 1.1;
/** A quick run's few samples make its "p99" their maximum: such a run is not judged (as in section 1). */
const JUDGED_SAMPLES = 30;
let directSerial = 0;
const directName = () => `bench-real-${(directSerial++).toString(36)}`;

export async function runRealisticStartBench(runner: BenchRunner, options: RealisticOptions): Promise<Row[]> {
  const { client, core, kubeConfig } = runner;
  // Warm-up (discarded), which also yields the pod spec the baseline creates as its own.
  const warm = await startSession(client);
  const template: V1Pod = await sessionPod(core, warm.sessionId);
  await directStart(kubeConfig, core, template, directName());
  await stopSessions(client, core, [warm.sessionId]);
  await clearDirectPods(core);

  const { seqRunner, seqDirect, conRunner, conDirect } = await sampleStarts(runner, template, directName, options);

  const section = "7 realistic start";
  const judged = (r: number) => ({ target: `≤ ${TARGET_RATIO}× p99`, verdict: r <= TARGET_RATIO ? ("met" as const) : ("MISSED" as const) });
  const rows: Row[] = [];
  for (const [label, runnerMs, directMs] of [
    ["one at a time", seqRunner, seqDirect],
    [`${options.concurrent} at once`, conRunner, conDirect],
  ] as const) {
    const r = summarize(runnerMs);
    const d = summarize(directMs);
    const p99 = ratio(r.p99, d.p99);
    rows.push(
      { section, metric: `POST→running, ${REALISTIC_POD_START_MS} ms container start, ${label} (p50)`, value: r, unit: "ms", baseline: d, ratio: ratio(r.median, d.median), compare: "p50" },
      {
        section,
        metric: `POST→running, ${REALISTIC_POD_START_MS} ms container start, ${label} (p99)`,
        value: r,
        unit: "ms",
        baseline: d,
        ratio: p99,
        compare: "p99",
        ...(runnerMs.length >= JUDGED_SAMPLES && judged(p99)),
      },
    );
  }
  return rows;
}
