/**
 * `npm run bench [-- --quick]`: the runner's benchmark suite (docs/benchmarks.md) against the embedded
 * simulated cluster with an instant kubelet, so the figures are the runner's own cost. Prints
 * one table and writes the same figures to bench/results/<date>.json and latest.json.
 *
 * Sections: 1 start overhead, 2 Kubernetes API cost (requests per start/stop, open watches),
 * 3 memory (and after the sessions ended), 4 terminal (4p: the same over the TCP peer link),
 * 5 SSE fan-out, 6 the simulated cluster itself (bench/sim.ts),
 * 7 realistic start (section 1's comparison with a 1 s container start), 8 warm start
 * (bench/warm.ts), 9 replica handover and takeover (bench/handover.ts), 10 kwok scale
 * (bench/kwok/scale.ts: a real control plane with kwok's fake nodes, root only, never by default;
 * `--only 10`, its size from KWOK_SESSIONS).
 * `--quick` runs every section with fewer repetitions and smaller counts (CI keeps it alive).
 * The api and the supervisor run compiled, as the image runs them (bench/support/build.ts);
 * `--source` runs them through tsx instead, as the tests do (faster to iterate on, but the
 * memory figures then include the loader's ~100 MB). `--only 4` (or `--only 1,5`) runs only
 * those sections (1 includes the requests per start and stop, 3 the open watches).
 */
import { mkdir, writeFile } from "node:fs/promises";
import { cpus, loadavg, release, totalmem } from "node:os";
import { fileURLToPath } from "node:url";
import { FANOUT_FULL, FANOUT_QUICK, runFanoutBench } from "./fanout.ts";
import { HANDOVER_FULL, HANDOVER_QUICK, runHandoverBench } from "./handover.ts";
import { KWOK_FULL, KWOK_QUICK, runKwokScaleBench } from "./kwok/scale.ts";
import { REALISTIC_FULL, REALISTIC_POD_START_MS, REALISTIC_QUICK, runRealisticStartBench } from "./realistic.ts";
import { EXIT_TTL_MS, SCALE_FULL, SCALE_QUICK, runScaleBench } from "./scale.ts";
import { START_FULL, START_QUICK, runStartBench } from "./start.ts";
import { renderNotes, renderTable, type Row } from "./support/report.ts";
import { compileRunner } from "./support/build.ts";
import { API_ENTRY, type BenchRunner, type EntryMode, SUPERVISOR_ENTRY, runChildJson, startBenchRunner } from "./support/runner.ts";
import { TERMINAL_FULL, TERMINAL_QUICK, runTerminalBench } from "./terminal.ts";
import { WARM_FULL, WARM_QUICK, runWarmBench } from "./warm.ts";

const quick = process.argv.includes("--quick");
const mode: EntryMode = process.argv.includes("--source") ? "source" : "compiled";
const onlyAt = process.argv.indexOf("--only");
const only = onlyAt >= 0 ? new Set((process.argv[onlyAt + 1] ?? "").split(",").map((n) => n.trim())) : undefined;
const wanted = (...numbers: string[]) => only === undefined || numbers.some((n) => only.has(n));
const RESULTS = fileURLToPath(new URL("./results/", import.meta.url));

const rows: Row[] = [];
const failures: string[] = [];
const began = performance.now();

function progress(text: string): void {
  process.stderr.write(`[bench ${((performance.now() - began) / 1000).toFixed(0)}s] ${text}\n`);
}

/** Runs one section; a failure is reported in the table and fails the run, the rest still runs. */
async function section(name: string, run: () => Promise<Row[]>): Promise<void> {
  progress(`${name}…`);
  // Other work on a shared machine moves every absolute figure; the load says how much.
  rows.push({ section: "0 machine", metric: `load average (1 min) as "${name}" began`, value: Math.round(loadavg()[0]! * 100) / 100, unit: "" });
  try {
    rows.push(...(await run()));
  } catch (error) {
    const message = error instanceof Error ? (error.stack ?? error.message) : String(error);
    failures.push(`${name}: ${message}`);
    rows.push({ section: name, metric: "FAILED", value: Number.NaN, unit: "", note: message.split("\n")[0] ?? "" });
  }
}

type RunnerOptions = { podStartDelayMs?: number; peer?: boolean; env?: Record<string, string> };

async function withRunner(run: (runner: BenchRunner) => Promise<void>, options: RunnerOptions = {}): Promise<void> {
  const runner = await startBenchRunner({ mode, ...options });
  try {
    await run(runner);
  } finally {
    await runner.close();
  }
}

/** bench/sim.ts reports a flat record whose keys end in their unit; rows are made from it. */
function simRows(record: Record<string, number | string>): Row[] {
  return Object.entries(record).map(([key, value]) => {
    const unit = / ms$/.test(key) ? "ms" : / MiB$/.test(key) ? "MiB" : / per s$/.test(key) ? "/s" : "";
    const metric = key.replace(/^sim /, "").replace(/ (ms|MiB|per s)$/, "");
    return { section: "6 simulated cluster", metric, value: typeof value === "number" ? value : Number(value), unit };
  });
}

// BENCH_COMPILED_DIR names a build kept aside (bench/support/build.ts): run it as it is.
if (mode === "compiled" && process.env.BENCH_COMPILED_DIR === undefined) {
  progress("compiling the runner (tsconfig.build.json)…");
  const build = await compileRunner([API_ENTRY, SUPERVISOR_ENTRY]);
  progress(`compiled in ${(build.ms / 1000).toFixed(0)} s${build.typeErrors ? " (with type errors)" : ""}`);
}

if (wanted("1", "2", "4", "5")) {
  await withRunner(async (runner) => {
    if (wanted("1", "2")) await section("1 start overhead", () => runStartBench(runner, quick ? START_QUICK : START_FULL));
    if (wanted("4")) await section("4 terminal", () => runTerminalBench(runner, quick ? TERMINAL_QUICK : TERMINAL_FULL));
    if (wanted("5")) await section("5 SSE fan-out", () => runFanoutBench(runner, quick ? FANOUT_QUICK : FANOUT_FULL));
  });
}
// Section 4 again with the api reaching its supervisor over the TCP peer link: a runner of its own.
if (wanted("4")) {
  await withRunner(async (runner) => {
    const peerRows = () => runTerminalBench(runner, quick ? TERMINAL_QUICK : TERMINAL_FULL);
    await section("4p terminal over the TCP peer link", async () => (await peerRows()).map((row) => ({ ...row, section: "4p terminal, TCP peer link" })));
  }, { peer: true });
}
// Memory starts from processes that have served nothing: a runner of its own, which evicts an
// ended session after EXIT_TTL_MS instead of 4 h so the section can read memory after eviction.
if (wanted("2", "3")) {
  await withRunner(async (runner) => {
    await section("3 memory", () => runScaleBench(runner, quick ? SCALE_QUICK : SCALE_FULL));
  }, { env: { RUNNER_EXIT_TTL_MS: String(EXIT_TTL_MS) } });
}
// A kubelet that takes as long as a real one: a runner (and cluster) of its own.
if (wanted("7")) {
  await withRunner(async (runner) => {
    await section("7 realistic start", () => runRealisticStartBench(runner, quick ? REALISTIC_QUICK : REALISTIC_FULL));
  }, { podStartDelayMs: REALISTIC_POD_START_MS });
}
// The warm pool on a kubelet that takes 1 s per container start: a runner of its own.
if (wanted("8")) await section("8 warm start", () => runWarmBench(mode, quick ? WARM_QUICK : WARM_FULL));
// Three replicas on a cluster of their own; one leaves (SIGTERM), then, on another trio, one is killed.
if (wanted("9")) await section("9 replica handover", () => runHandoverBench(mode, quick ? HANDOVER_QUICK : HANDOVER_FULL));
// A control plane with kwok's fake nodes (root, Go-built binaries): only when named, never by default.
if (only?.has("10")) await section("10 kwok scale", () => runKwokScaleBench(mode, quick ? KWOK_QUICK : KWOK_FULL, progress));
// bench/sim.ts (runSimBench) in a child process: see bench/support/sim-child.ts.
if (wanted("6")) {
  await section("6 simulated cluster", async () =>
    simRows(await runChildJson<Record<string, number | string>>("bench/support/sim-child.ts", quick ? ["--quick"] : [], ["--expose-gc"])),
  );
}

// Grouped by section number; within a section, rows keep the order they were measured in.
const sectionNumber = (row: Row) => {
  const n = Number.parseInt(row.section, 10);
  return Number.isNaN(n) ? 99 : n;
};
rows.sort((a, b) => sectionNumber(a) - sectionNumber(b) || (a.section < b.section ? -1 : a.section > b.section ? 1 : 0));

const machine = {
  cpus: cpus().length,
  cpuModel: cpus()[0]?.model.trim() ?? "unknown",
  memoryGiB: Math.round((totalmem() / 1024 ** 3) * 10) / 10,
  node: process.version,
  kernel: release(),
};
const date = new Date().toISOString();
const durationSeconds = Math.round((performance.now() - began) / 1000);
const header = `k8s-runner bench${quick ? " (quick)" : ""}${only ? ` (only ${[...only].join(",")})` : ""}${mode === "source" ? " (from source via tsx)" : ""} — ${date} — ${machine.cpus} CPU (${machine.cpuModel}), ${machine.memoryGiB} GiB, Node ${machine.node} — ${durationSeconds} s`;

console.log(header);
console.log(renderTable(rows));
const notes = renderNotes(rows);
if (notes) console.log(`\n${notes}`);

await mkdir(RESULTS, { recursive: true });
const json = `${JSON.stringify({ date, quick, mode, only: only ? [...only] : undefined, machine, durationSeconds, rows, failures }, null, 2)}\n`;
await writeFile(`${RESULTS}${date.replace(/:/g, "-")}.json`, json);
await writeFile(`${RESULTS}latest.json`, json);

if (failures.length > 0) {
  console.error(`\n${failures.length} section(s) failed:\n${failures.join("\n\n")}`);
  process.exit(1);
}
// Sockets of finished sections may linger in keep-alive pools; the run is over.
process.exit(0);
