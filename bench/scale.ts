/**
 * Sections 2 (watches) and 3 (memory): live sessions at growing counts, each with an attached
 * terminal and an SSE subscriber as a browser tab holds them; at each level the open watches
 * on the simulated cluster and the resident memory (VmRSS) of the api process and the
 * supervisor. A fresh runner, so the level-0 figure is a process that has served nothing.
 */
import { RunnerError, type Terminal } from "../src/client/index.ts";
import { waitFor } from "../test/support/wait.ts";
import type { Row } from "./support/report.ts";
import { type BenchRunner, floorRss, residentBytes } from "./support/runner.ts";
import { inBatches, startSession, stopSessions, subscribe } from "./support/sessions.ts";
import { MiB } from "./support/stats.ts";

/** `settleMs`: how long after the ended sessions' eviction memory is read the last time. */
export type ScaleOptions = { levels: number[]; width: number; settleMs: number };
export const SCALE_FULL: ScaleOptions = { levels: [1, 50, 100, 1000], width: 25, settleMs: 150_000 };
export const SCALE_QUICK: ScaleOptions = { levels: [1, 5, 20], width: 10, settleMs: 5_000 };

/** Quiet time before reading memory, so the start burst's garbage is not all that is measured. */
const QUIET_MS = 3000;
/** The memory targets (docs/benchmarks.md): both processes together at 50 and 1,000 live sessions, the api idle. */
const TARGETS: Record<number, number> = { 50: 150 * MiB, 1000: 250 * MiB };
const API_IDLE_TARGET = 60 * MiB;
/** Memory back within this of each process's idle figure once every session has ended and been evicted. */
const AFTER_MARGIN = 20 * MiB;
/** Section 3's runner retains an ended session this long (bench/main.ts), so the bench can see eviction. */
export const EXIT_TTL_MS = 15_000;
const overIdle = (now: number, idle: number) => `${now >= idle ? "+" : "−"}${(Math.abs(now - idle) / MiB).toFixed(1)} MiB against idle`;
const judge = (bytes: number, limit: number) => ({ target: `≤ ${limit / MiB} MiB`, verdict: bytes <= limit ? ("met" as const) : ("MISSED" as const) });

export type Live = { sessionId: string; terminal: Terminal; stopEvents: () => void };

/** A live session as a browser tab holds it: started, an SSE subscriber, its terminal served. */
export async function openLive(runner: Pick<BenchRunner, "client">): Promise<Live> {
  const { sessionId } = await startSession(runner.client);
  const subscriber = subscribe(runner.client, sessionId);
  const terminal = runner.client.terminal(sessionId);
  await terminal.opened;
  // The supervisor's first frame says the byte channel is being served.
  for await (const frame of terminal.frames()) if (frame.kind === "control" && frame.message.type === "seq") break;
  return { sessionId, terminal, stopEvents: subscriber.stop };
}

/** Both processes' VmRSS after `waitMs` of quiet. */
async function memory(runner: BenchRunner, waitMs = QUIET_MS): Promise<{ api: number; supervisor: number }> {
  await new Promise((resolve) => setTimeout(resolve, waitMs));
  return { api: await residentBytes(runner.apiPid), supervisor: await residentBytes(runner.supervisorPid) };
}

export async function runScaleBench(runner: BenchRunner, options: ScaleOptions): Promise<Row[]> {
  const rows: Row[] = [];
  const watches = "2 open watches";
  const mem = "3 memory";
  const base = await memory(runner);
  rows.push({ section: mem, metric: "RSS api + supervisor, 0 sessions", value: (base.api + base.supervisor) / MiB, unit: "MiB" });
  rows.push({ section: mem, metric: "  api, 0 sessions", value: base.api / MiB, unit: "MiB", ...judge(base.api, API_IDLE_TARGET) });
  rows.push({ section: mem, metric: "  supervisor, 0 sessions", value: base.supervisor / MiB, unit: "MiB" });
  // The floor under those: what any Node process, and one that has loaded client-node, holds.
  const floor = await floorRss();
  rows.push({ section: mem, metric: "  for reference: bare Node process", value: floor.bare / MiB, unit: "MiB" });
  rows.push({ section: mem, metric: "  for reference: Node + @kubernetes/client-node loaded", value: floor.clientNode / MiB, unit: "MiB" });

  const live: Live[] = [];
  try {
    for (const level of options.levels) {
      const more = level - live.length;
      live.push(...(await inBatches(Array.from({ length: more }), options.width, () => openLive(runner))));
      const open = runner.sim.counters().openWatches;
      rows.push({ section: watches, metric: `open watches, ${level} live session${level === 1 ? "" : "s"}`, value: open, unit: "watches", target: "1", verdict: open === 1 ? "met" : "MISSED" });
      if (level < 50 && level !== options.levels.at(-1)) continue;
      const now = await memory(runner);
      const total = now.api + now.supervisor;
      const perSession = (total - base.api - base.supervisor) / level;
      const limit = TARGETS[level];
      rows.push({ section: mem, metric: `RSS api + supervisor, ${level} sessions`, value: total / MiB, unit: "MiB", ...(limit !== undefined && judge(total, limit)) });
      rows.push({ section: mem, metric: `  api, ${level} sessions`, value: now.api / MiB, unit: "MiB" });
      rows.push({ section: mem, metric: `  supervisor, ${level} sessions`, value: now.supervisor / MiB, unit: "MiB" });
      rows.push({ section: mem, metric: `  per session (both), ${level} sessions`, value: Math.round(perSession), unit: "bytes" });
      rows.push({ section: mem, metric: `  per session in api, ${level} sessions`, value: Math.round((now.api - base.api) / level), unit: "bytes" });
      rows.push({ section: mem, metric: `  per session in supervisor, ${level} sessions`, value: Math.round((now.supervisor - base.supervisor) / level), unit: "bytes" });
    }
  } finally {
    for (const entry of live) {
      entry.stopEvents();
      entry.terminal.close();
    }
    await stopSessions(runner.client, runner.core, live.map((entry) => entry.sessionId)).catch(() => undefined);
  }
  // What the sessions leave behind once ended. Read twice: a few seconds after the end, while
  // the registry still retains the ended sessions (their histories stay readable until
  // RUNNER_EXIT_TTL_MS) and their garbage is uncollected; then `settleMs` after their eviction,
  // the figure the target is about. V8 frees the garbage when its idle-time memory reducer runs
  // a major collection, 60–120 s after the end in earlier measurements
  // (docs/benchmarks-relay.md); RSS stays flat until then, so no earlier reading can tell
  // "settled" from "not yet collected".
  const endedAt = performance.now();
  const retained = await memory(runner);
  const idle = base.api + base.supervisor;
  rows.push({ section: mem, metric: `RSS api + supervisor, ${live.length} sessions ended, still retained`, value: (retained.api + retained.supervisor) / MiB, unit: "MiB" });
  rows.push({ section: mem, metric: `  api, ${live.length} sessions ended, still retained`, value: retained.api / MiB, unit: "MiB" });
  rows.push({ section: mem, metric: `  supervisor, ${live.length} sessions ended, still retained`, value: retained.supervisor / MiB, unit: "MiB" });
  await waitUntilEvicted(runner, live.map((entry) => entry.sessionId));
  const settled = await memory(runner, options.settleMs);
  const within = (now: number, before: number) => now <= before + AFTER_MARGIN;
  const met = within(settled.api, base.api) && within(settled.supervisor, base.supervisor);
  rows.push({
    section: mem,
    metric: `RSS api + supervisor, ${live.length} sessions ended and evicted`,
    value: (settled.api + settled.supervisor) / MiB,
    unit: "MiB",
    target: `each ≤ its idle + ${AFTER_MARGIN / MiB} MiB`,
    verdict: met ? "met" : "MISSED",
    note: `read ${((performance.now() - endedAt) / 1000).toFixed(0)} s after the end; idle ${(idle / MiB).toFixed(1)} MiB`,
  });
  rows.push({ section: mem, metric: `  api, ${live.length} sessions ended and evicted`, value: settled.api / MiB, unit: "MiB", note: overIdle(settled.api, base.api) });
  rows.push({ section: mem, metric: `  supervisor, ${live.length} sessions ended and evicted`, value: settled.supervisor / MiB, unit: "MiB", note: overIdle(settled.supervisor, base.supervisor) });
  return rows;
}

/**
 * Until the supervisor has dropped every ended session (RUNNER_EXIT_TTL_MS after its end). No
 * session goes before the TTL, so asking starts after it: polling sooner would only add
 * requests, and their garbage, to the memory about to be read.
 */
async function waitUntilEvicted(runner: BenchRunner, sessionIds: string[]): Promise<void> {
  await new Promise((resolve) => setTimeout(resolve, EXIT_TTL_MS));
  for (const id of sessionIds) {
    await waitFor(
      `session ${id} to be evicted`,
      () => runner.client.getSession(id).then(
        () => false,
        (error: unknown) => error instanceof RunnerError && error.status === 404,
      ),
      EXIT_TTL_MS + 60_000,
    );
  }
}
