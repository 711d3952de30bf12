/**
 * `npm run bench:reference [-- --quick] [-- --runs N] [-- --reference-dir DIR]`: our runner and the
 * reference runner (@telorun/k8s-runner of the telorun/telo repository, built beforehand outside
 * this repository: docs/benchmarks.md, "Against the reference runner") side by side on ONE
 * simulated cluster whose kubelet takes 100 ms to start a pod. Each run starts both afresh and
 * interleaves them measurement by measurement (which one goes first alternates by run):
 *
 * - start, one at a time (ours and the reference alternating, sample by sample), and C at once;
 * - Kubernetes API requests per start and per stop (the simulated cluster's recorded requests,
 *   told apart by namespace), open watches idle and with live sessions;
 * - resident memory (VmRSS of every process: ours api + supervisor, both compiled as deployed;
 *   the reference's one process) idle, with L1 and L2 live sessions (terminal + SSE each), and
 *   idle again once they ended and were evicted (both with RUNNER_EXIT_TTL_MS short); each
 *   reading also as the distinct physical pages held, because summed VmRSS counts the node
 *   binary's pages, which our two processes share, twice (support/resident-pages.ts);
 * - terminal echo round trip, one keystroke to its echo, batches alternating, with the CPU time
 *   each side's processes spend per keystroke (from /proc/<pid>/stat, over all its batches).
 *
 * Prints one Markdown table (ours, reference, ours / reference, target, verdict) and writes the
 * per-run figures to bench/results/reference-<date>.json and reference-latest.json.
 */
import { mkdir, writeFile } from "node:fs/promises";
import { cpus, loadavg, totalmem } from "node:os";
import { fileURLToPath } from "node:url";
import { CoreV1Api } from "@kubernetes/client-node";
import { RunnerError, type RunnerClient } from "../src/client/index.ts";
import { startLocalCluster } from "../src/local-cluster/index.ts";
import type { SimulatedCluster } from "../src/sim/index.ts";
import { waitFor } from "../test/support/wait.ts";
import { EXIT_TTL_MS, type Live, openLive } from "./scale.ts";
import { compileRunner } from "./support/build.ts";
import { ByteCounter } from "./support/bytes.ts";
import { layOutReferenceNamespaces, REFERENCE_BUILD_NAMESPACE, REFERENCE_SESSION_NAMESPACE, startManifestStub, startReferenceRunner, treeMemory } from "./support/reference-runner.ts";
import { API_ENTRY, SESSION_NAMESPACE, SUPERVISOR_ENTRY, cpuMs, startBenchRunner } from "./support/runner.ts";
import { inBatches, quiesce, startSession } from "./support/sessions.ts";
import { MiB, percentile } from "./support/stats.ts";
import { echoBatch, type Side as EchoSide } from "./terminal.ts";

type Options = { runs: number; sequential: number; concurrent: number; levels: [number, number]; width: number; echoBatches: number; echoPerBatch: number; settleMs: number };
const FULL: Options = { runs: 3, sequential: 30, concurrent: 50, levels: [50, 500], width: 25, echoBatches: 40, echoPerBatch: 25, settleMs: 150_000 };
const QUICK: Options = { runs: 1, sequential: 5, concurrent: 10, levels: [5, 10], width: 10, echoBatches: 4, echoPerBatch: 25, settleMs: 5_000 };

const POD_START_MS = 100;
/** Quiet time before a memory reading, as section 3 waits. */
const QUIET_MS = 3000;
/** The target for memory once the sessions ended and were evicted: within this of idle (ours). */
const AFTER_MARGIN = 10 * MiB;

const arg = (name: string) => {
  const at = process.argv.indexOf(name);
  return at >= 0 ? process.argv[at + 1] : undefined;
};
const quick = process.argv.includes("--quick");
const options: Options = { ...(quick ? QUICK : FULL), ...(arg("--runs") !== undefined && { runs: Number(arg("--runs")) }) };
const referenceDir = arg("--reference-dir");
const RESULTS = fileURLToPath(new URL("./results/", import.meta.url));
const began = performance.now();
const progress = (text: string) => process.stderr.write(`[bench:reference ${((performance.now() - began) / 1000).toFixed(0)}s] ${text}\n`);
const load = () => Math.round(loadavg()[0]! * 100) / 100;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

type Name = "ours" | "reference";
/** Summed VmRSS, and the distinct physical pages (bench/support/resident-pages.ts), in bytes. */
type Memory = { rss: number; distinct: number | undefined };
/** A side's processes by role (ours: api and supervisor; the reference: its one process). */
type Side = { name: Name; client: RunnerClient; sessionNamespace: string; namespaces: string[]; processes: Record<string, number>; memory(): Promise<Memory> };
type PerSide<T> = Record<Name, T>;

type RunResult = {
  order: Name[];
  loadAtStart: number;
  loadAtEnd: number;
  startSequentialMs: PerSide<number[]>;
  startConcurrentMs: PerSide<number[]>;
  requestsPerStart: PerSide<number>;
  requestsPerStop: PerSide<number>;
  requestsStartBreakdown: PerSide<Record<string, number>>;
  requestsStopBreakdown: PerSide<Record<string, number>>;
  /** Requests made in no namespace during the start and stop windows (neither runner's by namespace). */
  requestsUnattributed: number;
  watchesIdle: PerSide<number>;
  watchesAt: Record<number, PerSide<number>>;
  rssIdle: PerSide<Memory>;
  rssAt: Record<number, PerSide<Memory>>;
  rssAfter: PerSide<Memory>;
  echoMs: PerSide<number[]>;
  /** CPU microseconds per keystroke round trip, by process role. */
  echoCpuUsPerKey: PerSide<Record<string, number>>;
};

/** Requests by namespace since the last reset: one per request (an attach's second RBAC tuple not counted). */
function requestsByNamespace(sim: SimulatedCluster): Map<string, Record<string, number>> {
  const out = new Map<string, Record<string, number>>();
  for (const [ns, n] of ownLists) out.set(ns, { "list pods": -n });
  for (const r of sim.recordedRequests()) {
    if (r.verb === "create" && (r.subresource === "attach" || r.subresource === "exec")) continue;
    const ns = r.namespace ?? "";
    const key = `${r.verb} ${r.resource}${r.subresource ? `/${r.subresource}` : ""}`;
    const bucket = out.get(ns) ?? {};
    bucket[key] = (bucket[key] ?? 0) + 1;
    out.set(ns, bucket);
  }
  for (const bucket of out.values()) for (const [key, n] of Object.entries(bucket)) if (n === 0) delete bucket[key];
  return out;
}

function requestsOf(byNs: Map<string, Record<string, number>>, side: Side): { total: number; breakdown: Record<string, number> } {
  const breakdown: Record<string, number> = {};
  for (const ns of side.namespaces) for (const [key, n] of Object.entries(byNs.get(ns) ?? {})) breakdown[key] = (breakdown[key] ?? 0) + n;
  return { total: Object.values(breakdown).reduce((a, b) => a + b, 0), breakdown };
}

/** The bench's own pod lists per namespace, taken off the runners' request counts. */
const ownLists = new Map<string, number>();

async function podsLeft(core: CoreV1Api, namespace: string): Promise<number> {
  ownLists.set(namespace, (ownLists.get(namespace) ?? 0) + 1);
  return (await core.listNamespacedPod({ namespace })).items.length;
}

/** DELETE every session, then until the side's namespace holds no pod. */
async function stopAll(core: CoreV1Api, side: Side, ids: string[]): Promise<void> {
  await inBatches(ids, 50, (id) => side.client.deleteSession(id).catch((error: unknown) => {
    if (!(error instanceof RunnerError && error.status === 404)) throw error;
  }));
  await waitFor(`${side.name}'s pods to be gone`, async () => (await podsLeft(core, side.sessionNamespace)) === 0, 120_000);
}

/** CPU milliseconds each of a side's processes has used so far. */
async function cpuByRole(side: Side): Promise<Record<string, number>> {
  const out: Record<string, number> = {};
  for (const [role, pid] of Object.entries(side.processes)) out[role] = await cpuMs(pid);
  return out;
}

async function untilEvicted(side: Side, ids: string[]): Promise<void> {
  for (const id of ids) {
    await waitFor(`${side.name} to evict ${id}`, () => side.client.getSession(id).then(
      () => false,
      (error: unknown) => error instanceof RunnerError && error.status === 404,
    ), EXIT_TTL_MS + 60_000);
  }
}

/**
 * A session with its terminal open and served, for the echo round trips. Output bytes are counted
 * from the raw WebSocket messages on both sides, because the two frame them differently: ours
 * `[seq u32][stream u8][bytes]`, the reference (0.10.1) `[seq u32][bytes]` with no stream byte,
 * which our typed client's frame decoder does not accept (docs/benchmarks.md).
 */
async function echoSide(side: Side): Promise<{ echo: EchoSide; sessionId: string; close(): void }> {
  const { sessionId } = await startSession(side.client);
  const terminal = side.client.terminal(sessionId);
  const counter = new ByteCounter();
  const prefix = side.name === "ours" ? 5 : 4;
  let served!: () => void;
  const seq = new Promise<void>((resolve) => (served = resolve));
  terminal.socket.addEventListener("message", (event: { data: unknown }) => {
    if (typeof event.data === "string") {
      if ((JSON.parse(event.data) as { type?: string }).type === "seq") served();
    } else {
      counter.add((event.data as ArrayBuffer).byteLength - prefix);
    }
  });
  await terminal.opened;
  await seq;
  return { echo: { counter, send: (bytes) => terminal.socket.send(bytes) }, sessionId, close: () => terminal.close() };
}

async function runOnce(run: number, sim: SimulatedCluster, core: CoreV1Api, registryUrl: string): Promise<RunResult> {
  const order: Name[] = run % 2 === 0 ? ["ours", "reference"] : ["reference", "ours"];
  const loadAtStart = load();
  const watchesIdle = {} as PerSide<number>;
  const sides = {} as PerSide<Side>;
  const closers: (() => Promise<void>)[] = [];
  const exitTtl = { RUNNER_EXIT_TTL_MS: String(EXIT_TTL_MS) };
  try {
    // Started one after the other, each settled before the next, so its idle watches are its own.
    for (const name of order) {
      await quiesce(sim);
      const before = sim.counters().openWatches;
      if (name === "ours") {
        const ours = await startBenchRunner({ mode: "compiled", cluster: sim, env: exitTtl });
        closers.push(() => ours.close());
        sides.ours = { name, client: ours.client, sessionNamespace: SESSION_NAMESPACE, namespaces: [SESSION_NAMESPACE, "telo-builds"], processes: { api: ours.apiPid, supervisor: ours.supervisorPid }, memory: () => treeMemory([ours.apiPid, ours.supervisorPid]) };
      } else {
        const reference = await startReferenceRunner({ cluster: sim, registryUrl, dir: referenceDir, env: exitTtl });
        closers.push(() => reference.close());
        sides.reference = { name, client: reference.client, sessionNamespace: REFERENCE_SESSION_NAMESPACE, namespaces: [REFERENCE_SESSION_NAMESPACE, REFERENCE_BUILD_NAMESPACE], processes: { runner: reference.pid }, memory: () => treeMemory([reference.pid]) };
      }
      await quiesce(sim);
      watchesIdle[name] = sim.counters().openWatches - before;
    }
    const both = order.map((name) => sides[name]);
    await sleep(QUIET_MS);
    const rssIdle = { ours: await sides.ours.memory(), reference: await sides.reference.memory() };
    progress(`run ${run + 1}: idle (ours ${(rssIdle.ours.rss / MiB).toFixed(1)} MiB, reference ${(rssIdle.reference.rss / MiB).toFixed(1)} MiB); starts one at a time…`);

    // A warm-up start and stop each (first-use costs: module loading, the first connections).
    for (const side of both) {
      const warm = await startSession(side.client);
      await stopAll(core, side, [warm.sessionId]);
    }

    // One at a time, alternating sample by sample; requests counted per side by namespace.
    await quiesce(sim);
    sim.resetCounters();
    ownLists.clear();
    const startSequentialMs: PerSide<number[]> = { ours: [], reference: [] };
    const seqIds: PerSide<string[]> = { ours: [], reference: [] };
    for (let i = 0; i < options.sequential; i++) {
      for (const side of both) {
        const started = await startSession(side.client);
        startSequentialMs[side.name].push(started.ms);
        seqIds[side.name].push(started.sessionId);
      }
    }
    await quiesce(sim);
    const startRequests = requestsByNamespace(sim);
    sim.resetCounters();
    ownLists.clear();
    for (const side of both) await stopAll(core, side, seqIds[side.name]);
    await quiesce(sim);
    const stopRequests = requestsByNamespace(sim);
    const per = (byNs: Map<string, Record<string, number>>, side: Side) => requestsOf(byNs, side).total / options.sequential;
    const requestsPerStart = { ours: per(startRequests, sides.ours), reference: per(startRequests, sides.reference) };
    const requestsPerStop = { ours: per(stopRequests, sides.ours), reference: per(stopRequests, sides.reference) };
    const unattributed = (byNs: Map<string, Record<string, number>>) => Object.values(byNs.get("") ?? {}).reduce((a, b) => a + b, 0);

    progress(`run ${run + 1}: ${options.concurrent} at once…`);
    const startConcurrentMs: PerSide<number[]> = { ours: [], reference: [] };
    for (const side of both) {
      const started = await Promise.all(Array.from({ length: options.concurrent }, () => startSession(side.client)));
      startConcurrentMs[side.name].push(...started.map((s) => s.ms));
      await stopAll(core, side, started.map((s) => s.sessionId));
    }

    progress(`run ${run + 1}: terminal echo…`);
    const echoMs: PerSide<number[]> = { ours: [], reference: [] };
    const echoCpuMs: PerSide<Record<string, number>> = { ours: {}, reference: {} };
    const echoes = {} as PerSide<Awaited<ReturnType<typeof echoSide>>>;
    for (const side of both) echoes[side.name] = await echoSide(side);
    for (const side of both) await echoBatch(echoes[side.name].echo, 20);
    for (let b = 0; b < options.echoBatches; b++) {
      for (const side of both) {
        const before = await cpuByRole(side);
        echoMs[side.name].push(...(await echoBatch(echoes[side.name].echo, options.echoPerBatch)));
        const after = await cpuByRole(side);
        for (const role of Object.keys(after)) echoCpuMs[side.name][role] = (echoCpuMs[side.name][role] ?? 0) + after[role]! - before[role]!;
      }
    }
    const perKey = (cpuMs: Record<string, number>, keys: number) => Object.fromEntries(Object.entries(cpuMs).map(([role, ms]) => [role, (ms * 1000) / keys]));
    const echoCpuUsPerKey = { ours: perKey(echoCpuMs.ours, echoMs.ours.length), reference: perKey(echoCpuMs.reference, echoMs.reference.length) };
    for (const side of both) {
      echoes[side.name].close();
      await stopAll(core, side, [echoes[side.name].sessionId]);
    }

    // Live sessions: each side up to the level, the other holding its own meanwhile.
    const live: PerSide<Live[]> = { ours: [], reference: [] };
    const watchesAt: Record<number, PerSide<number>> = {};
    const rssAt: Record<number, PerSide<Memory>> = {};
    let previous = { ...watchesIdle };
    try {
      for (const level of options.levels) {
        watchesAt[level] = {} as PerSide<number>;
        rssAt[level] = {} as PerSide<Memory>;
        for (const side of both) {
          progress(`run ${run + 1}: ${side.name} to ${level} live sessions…`);
          await quiesce(sim);
          const before = sim.counters().openWatches;
          const more = level - live[side.name].length;
          live[side.name].push(...(await inBatches(Array.from({ length: more }), options.width, () => openLive(side))));
          await quiesce(sim);
          watchesAt[level][side.name] = previous[side.name] + sim.counters().openWatches - before;
          await sleep(QUIET_MS);
          rssAt[level][side.name] = await side.memory();
        }
        previous = { ...watchesAt[level] };
      }
    } finally {
      for (const side of both) {
        for (const entry of live[side.name]) {
          entry.stopEvents();
          entry.terminal.close();
        }
        await stopAll(core, side, live[side.name].map((entry) => entry.sessionId)).catch(() => undefined);
      }
    }

    progress(`run ${run + 1}: waiting for eviction (${EXIT_TTL_MS / 1000} s) and ${options.settleMs / 1000} s more…`);
    await sleep(EXIT_TTL_MS);
    for (const side of both) await untilEvicted(side, live[side.name].map((entry) => entry.sessionId));
    await sleep(options.settleMs);
    const rssAfter = { ours: await sides.ours.memory(), reference: await sides.reference.memory() };

    return {
      order,
      loadAtStart,
      loadAtEnd: load(),
      startSequentialMs,
      startConcurrentMs,
      requestsPerStart,
      requestsPerStop,
      requestsStartBreakdown: { ours: requestsOf(startRequests, sides.ours).breakdown, reference: requestsOf(startRequests, sides.reference).breakdown },
      requestsStopBreakdown: { ours: requestsOf(stopRequests, sides.ours).breakdown, reference: requestsOf(stopRequests, sides.reference).breakdown },
      requestsUnattributed: unattributed(startRequests) + unattributed(stopRequests),
      watchesIdle,
      watchesAt,
      rssIdle,
      rssAt,
      rssAfter,
      echoMs,
      echoCpuUsPerKey,
    };
  } finally {
    for (const close of closers.reverse()) await close().catch(() => undefined);
  }
}

// ---- the table ----

const median = (values: number[]) => percentile([...values].sort((a, b) => a - b), 50);
const p = (values: number[], q: number) => percentile([...values].sort((a, b) => a - b), q);
const sum = (byRole: Record<string, number>) => Object.values(byRole).reduce((a, b) => a + b, 0);
const fmt = (value: number, digits = 1) => (Number.isFinite(value) ? value.toFixed(digits) : "–");

type Line = { metric: string; ours: number; reference: number; unit: string; digits?: number; target?: string; verdict?: string };

function lines(results: RunResult[]): Line[] {
  const pool = (pick: (r: RunResult) => PerSide<number[]>) => ({
    ours: results.flatMap((r) => pick(r).ours),
    reference: results.flatMap((r) => pick(r).reference),
  });
  const mid = (pick: (r: RunResult) => PerSide<number>) => ({ ours: median(results.map((r) => pick(r).ours)), reference: median(results.map((r) => pick(r).reference)) });
  const seq = pool((r) => r.startSequentialMs);
  const con = pool((r) => r.startConcurrentMs);
  const echo = pool((r) => r.echoMs);
  const [l1, l2] = options.levels;
  const out: Line[] = [];
  const timing = (metric: string, samples: PerSide<number[]>, q: number, target?: boolean) => {
    const ours = p(samples.ours, q);
    const reference = p(samples.reference, q);
    out.push({
      metric: `${metric} p${q} (n=${samples.ours.length})`,
      ours,
      reference,
      unit: "ms",
      ...(target && { target: "≤ reference", verdict: verdict(ours <= reference, ours - reference, "ms") }),
    });
  };
  timing(`start, 1 at a time (${POD_START_MS} ms pod start),`, seq, 50);
  timing(`start, 1 at a time (${POD_START_MS} ms pod start),`, seq, 99);
  timing(`start, ${options.concurrent} at once,`, con, 50);
  timing(`start, ${options.concurrent} at once,`, con, 99);
  const starts = mid((r) => r.requestsPerStart);
  const stops = mid((r) => r.requestsPerStop);
  out.push({ metric: "API requests per start", ...starts, unit: "requests" });
  out.push({ metric: "API requests per stop", ...stops, unit: "requests" });
  out.push({ metric: "open watches, idle", ...mid((r) => r.watchesIdle), unit: "watches", digits: 0 });
  out.push({ metric: `open watches, ${l1} live sessions`, ...mid((r) => r.watchesAt[l1]!), unit: "watches", digits: 0 });
  // Each memory reading twice: summed VmRSS (the targets' measure), and each physical page once.
  const memoryLines = (label: string, read: (memory: Memory) => number | undefined) => {
    const mib = (pick: (r: RunResult) => PerSide<Memory>) => {
      const m = mid((r) => ({ ours: read(pick(r).ours) ?? Number.NaN, reference: read(pick(r).reference) ?? Number.NaN }));
      return { ours: m.ours / MiB, reference: m.reference / MiB };
    };
    const idle = mib((r) => r.rssIdle);
    if (!Number.isFinite(idle.ours)) return;
    out.push({ metric: `${label} idle`, ...idle, unit: "MiB" });
    for (const level of [l1, l2]) {
      const at = mib((r) => r.rssAt[level]!);
      out.push({ metric: `${label}, ${level} live sessions (terminal + events each)`, ...at, unit: "MiB", target: "≤ reference", verdict: verdict(at.ours <= at.reference, at.ours - at.reference, "MiB") });
    }
    const after = mib((r) => r.rssAfter);
    const overIdle = after.ours - idle.ours;
    out.push({
      metric: `${label} idle again (${l2} ended and evicted, read ${options.settleMs / 1000} s after)`,
      ...after,
      unit: "MiB",
      target: `ours ≤ its idle + ${AFTER_MARGIN / MiB} MiB`,
      verdict: `${overIdle <= AFTER_MARGIN / MiB ? "met" : "MISSED"} (${overIdle >= 0 ? "+" : "−"}${fmt(Math.abs(overIdle))} MiB against idle; reference ${after.reference - idle.reference >= 0 ? "+" : "−"}${fmt(Math.abs(after.reference - idle.reference))})`,
    });
  };
  memoryLines("RSS", (memory) => memory.rss);
  memoryLines("Distinct pages", (memory) => memory.distinct);
  timing("terminal echo round trip", echo, 50, true);
  timing("terminal echo round trip", echo, 99, true);
  const cpuPerKey = mid((r) => ({ ours: sum(r.echoCpuUsPerKey.ours), reference: sum(r.echoCpuUsPerKey.reference) }));
  out.push({ metric: "CPU per keystroke round trip, all the side's processes", ...cpuPerKey, unit: "µs", digits: 0 });
  return out;
}

function verdict(met: boolean, by: number, unit: string): string {
  return `${met ? "met" : "MISSED"} (${by <= 0 ? "" : "+"}${fmt(by, unit === "ms" ? 2 : 1)} ${unit})`;
}

function renderMarkdown(rows: Line[]): string {
  const head = "| metric | ours | reference | ours / reference | unit | target | verdict |\n| --- | --: | --: | --: | --- | --- | --- |";
  const body = rows.map((row) => {
    const digits = row.digits ?? (row.unit === "ms" ? 2 : 1);
    const ratio = row.reference > 0 ? `${(row.ours / row.reference).toFixed(2)}×` : "–";
    return `| ${row.metric} | ${fmt(row.ours, digits)} | ${fmt(row.reference, digits)} | ${ratio} | ${row.unit} | ${row.target ?? ""} | ${row.verdict ?? ""} |`;
  });
  return [head, ...body].join("\n");
}

// ---- main ----

if (process.env.BENCH_COMPILED_DIR === undefined) {
  progress("compiling our runner (npm run build's output)…");
  const build = await compileRunner([API_ENTRY, SUPERVISOR_ENTRY]);
  progress(`compiled in ${(build.ms / 1000).toFixed(0)} s${build.typeErrors ? " (with type errors)" : ""}`);
}

const { cluster: sim } = await startLocalCluster({}, { podStartDelayMs: POD_START_MS });
const core = sim.kubeConfig().makeApiClient(CoreV1Api);
await layOutReferenceNamespaces(core);
const registry = await startManifestStub();
const results: RunResult[] = [];
let failure: unknown;
try {
  for (let run = 0; run < options.runs; run++) {
    progress(`run ${run + 1} of ${options.runs} (load ${load()})…`);
    results.push(await runOnce(run, sim, core, registry.url));
  }
} catch (error) {
  failure = error;
} finally {
  await registry.close();
  await sim.stop();
}

const date = new Date().toISOString();
const machine = { cpus: cpus().length, cpuModel: cpus()[0]?.model.trim() ?? "unknown", memoryGiB: Math.round((totalmem() / 1024 ** 3) * 10) / 10, node: process.version };
if (results.length > 0) {
  const rows = lines(results);
  console.log(`k8s-runner vs the reference runner${quick ? " (quick)" : ""} — ${date} — ${machine.cpus} CPU, Node ${machine.node} — ${results.length} run(s), ${Math.round((performance.now() - began) / 1000)} s`);
  console.log(`load average (1 min) per run, start → end: ${results.map((r) => `${r.loadAtStart} → ${r.loadAtEnd} (${r.order.join(" first, ")} second)`).join("; ")}`);
  console.log();
  console.log(renderMarkdown(rows));
  console.log();
  for (const result of results) {
    console.log(`requests per start, run ${results.indexOf(result) + 1}: ours ${JSON.stringify(result.requestsStartBreakdown.ours)}; reference ${JSON.stringify(result.requestsStartBreakdown.reference)} (over ${options.sequential} starts)`);
    const roles = (byRole: Record<string, number>) => Object.entries(byRole).map(([role, us]) => `${role} ${fmt(us, 0)}`).join(" + ");
    console.log(`CPU per keystroke round trip (µs), run ${results.indexOf(result) + 1}: ours ${roles(result.echoCpuUsPerKey.ours)}; reference ${roles(result.echoCpuUsPerKey.reference)}`);
    console.log(`requests per stop, run ${results.indexOf(result) + 1}: ours ${JSON.stringify(result.requestsStopBreakdown.ours)}; reference ${JSON.stringify(result.requestsStopBreakdown.reference)}; in no namespace: ${result.requestsUnattributed}`);
  }
  await mkdir(RESULTS, { recursive: true });
  const json = `${JSON.stringify({ date, quick, options, machine, rows, results }, null, 2)}\n`;
  await writeFile(`${RESULTS}reference-${date.replace(/:/g, "-")}.json`, json);
  await writeFile(`${RESULTS}reference-latest.json`, json);
}
if (failure !== undefined) {
  console.error(`bench:reference failed: ${failure instanceof Error ? (failure.stack ?? failure.message) : String(failure)}`);
  process.exit(1);
}
process.exit(0);
