/**
 * `npx tsx bench/echo-ab.ts [--peer] [--keys N]`: the keystroke round trip of section 4
 * (bench/terminal.ts) with ten times its samples, and the CPU each process spends per
 * keystroke. Section 4's p99 is the third-slowest of 300 keystrokes, which on a shared machine
 * moves by several milliseconds between runs of one build; this is the tool for telling two
 * builds apart: run it alternately with `BENCH_COMPILED_DIR` pointing at each build
 * (bench/support/build.ts) and compare the medians of the runs (docs/benchmarks-relay.md).
 *
 * Prints one JSON line: round-trip percentiles through the runner and through a direct attach,
 * the runner's p99 over the direct one, CPU microseconds per keystroke of the api, the
 * supervisor and this process (the simulated cluster and both clients; each batch's line erase
 * is counted with its keystrokes), and the load average as the measured keystrokes began.
 */
import { loadavg } from "node:os";
import { type BenchRunner, cpuSnapshot, startBenchRunner } from "./support/runner.ts";
import { percentile } from "./support/stats.ts";
import { type Side, echoBatch, openPair } from "./terminal.ts";

const keysAt = process.argv.indexOf("--keys");
const KEYS = keysAt >= 0 ? Number(process.argv[keysAt + 1]) : 3000;
const PER_BATCH = 25;
const WARM_UP = 200;

type Cpu = { api: number; supervisor: number; bench: number };

/** Runs `count` keystrokes on `side` in batches, adding their CPU time to `cpu`. */
async function measure(runner: BenchRunner, side: Side, samples: number[], cpu: Cpu): Promise<void> {
  const before = await cpuSnapshot(runner);
  samples.push(...(await echoBatch(side, PER_BATCH)));
  const after = await cpuSnapshot(runner);
  cpu.api += after.api - before.api;
  cpu.supervisor += after.supervisor - before.supervisor;
  cpu.bench += after.bench - before.bench;
}

function summary(samples: number[]) {
  const sorted = [...samples].sort((a, b) => a - b);
  const at = (p: number) => Math.round(percentile(sorted, p) * 1000) / 1000;
  return { p50: at(50), p90: at(90), p95: at(95), p99: at(99), max: at(100) };
}

const runner = await startBenchRunner({ mode: "compiled", peer: process.argv.includes("--peer") });
try {
  const pair = await openPair(runner);
  const runnerSamples: number[] = [];
  const directSamples: number[] = [];
  const runnerCpu: Cpu = { api: 0, supervisor: 0, bench: 0 };
  const directCpu: Cpu = { api: 0, supervisor: 0, bench: 0 };
  try {
    // Both paths past the optimising compiler's first pass; these samples are not kept.
    await echoBatch(pair.runnerSide, WARM_UP);
    await echoBatch(pair.directSide, WARM_UP);
    const load = loadavg()[0]!;
    for (let keys = 0; keys < KEYS; keys += PER_BATCH) {
      await measure(runner, pair.runnerSide, runnerSamples, runnerCpu);
      await measure(runner, pair.directSide, directSamples, directCpu);
    }
    const perKey = (ms: number) => Math.round((ms * 1000) / runnerSamples.length);
    const through = summary(runnerSamples);
    const direct = summary(directSamples);
    console.log(
      JSON.stringify({
        link: process.argv.includes("--peer") ? "tcp peer" : "unix socket",
        keys: runnerSamples.length,
        load: Math.round(load * 100) / 100,
        runnerMs: through,
        directMs: direct,
        p99GapMs: Math.round((through.p99 - direct.p99) * 100) / 100,
        cpuMicrosPerKey: { api: perKey(runnerCpu.api), supervisor: perKey(runnerCpu.supervisor), bench: perKey(runnerCpu.bench), benchDirect: perKey(directCpu.bench) },
      }),
    );
  } finally {
    await pair.close();
  }
} finally {
  await runner.close();
}
process.exit(0);
