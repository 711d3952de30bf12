/**
 * Section 4: the terminal through both processes (pod → supervisor's attach → internal socket
 * → api → WebSocket client) against the direct baseline: the runner's own `attachContainer`
 * (src/kube/io/attach.ts, the channel.k8s.io client the supervisor uses, built on client-node's
 * KubeConfig) attached to a copy of the session's pod created directly. Using the runner's
 * attach code for the baseline makes the ratio the cost of the two relay hops alone.
 *
 * The simulated container is a tty running `cat`: its line discipline echoes every stdin byte
 * as its own output chunk, then prints the completed line. So a line of L bytes sent comes back
 * as L one-byte chunks, "\r\n", and the line with "\r\n": 2L + 4 bytes in L + 2 chunks. The
 * throughput figures are therefore dominated by per-chunk cost, for runner and baseline alike.
 */
import { availableParallelism } from "node:os";
import { attachContainer } from "../src/kube/io/attach.ts";
import type { Row } from "./support/report.ts";
import { ByteCounter } from "./support/bytes.ts";
import { type BenchRunner, cpuSnapshot, podCopy, SESSION_NAMESPACE } from "./support/runner.ts";
import { clearDirectPods, DIRECT_LABEL, sessionPod, startSession, stopSessions, watchUntilRunning } from "./support/sessions.ts";
import { ratio, since, summarize } from "./support/stats.ts";

export type TerminalOptions = { echoBatches: number; echoPerBatch: number; trials: number; trialMs: number };
export const TERMINAL_FULL: TerminalOptions = { echoBatches: 120, echoPerBatch: 25, trials: 6, trialMs: 2000 };
export const TERMINAL_QUICK: TerminalOptions = { echoBatches: 2, echoPerBatch: 25, trials: 2, trialMs: 500 };

const LINE_BYTES = 1024;
/** Lines in flight: enough to keep both hops busy, far below the attach's 1 MiB stdin cap. */
const WINDOW = 16;
const KILL_LINE = Buffer.from([0x15]);

export type Side = { counter: ByteCounter; send(bytes: Uint8Array): void };

/** Round trips of one keystroke to its echo; the pending line is cleared after each batch. */
export async function echoBatch(side: Side, count: number): Promise<number[]> {
  const samples: number[] = [];
  const x = Buffer.from("x");
  for (let i = 0; i < count; i++) {
    const mark = side.counter.total;
    const start = performance.now();
    side.send(x);
    await side.counter.until(mark + 1);
    samples.push(since(start));
  }
  // ^U erases the pending line: "\b \b" for each byte typed.
  const mark = side.counter.total;
  side.send(KILL_LINE);
  await side.counter.until(mark + 3 * count);
  return samples;
}

/** Bytes per second of echoed output for `ms`, keeping WINDOW lines in flight. */
async function throughput(side: Side, ms: number): Promise<{ bytesPerSecond: number; framesPerSecond: number; frames: number; bytes: number; seconds: number }> {
  const line = Buffer.alloc(LINE_BYTES + 1, "a".charCodeAt(0));
  line[LINE_BYTES] = 0x0d;
  const perLine = 2 * LINE_BYTES + 4;
  const startBytes = side.counter.total;
  const startFrames = side.counter.frames;
  const start = performance.now();
  let sent = 0;
  while (since(start) < ms && side.counter.total + WINDOW * perLine < OUTPUT_BUDGET_BYTES) {
    if (sent >= WINDOW) await side.counter.until(startBytes + (sent - WINDOW + 1) * perLine);
    side.send(line);
    sent += 1;
  }
  await side.counter.until(startBytes + sent * perLine);
  const seconds = since(start) / 1000;
  const frames = side.counter.frames - startFrames;
  const bytes = side.counter.total - startBytes;
  return { bytesPerSecond: bytes / seconds, framesPerSecond: frames / seconds, frames, bytes, seconds };
}

/**
 * The simulated kubelet keeps 2 MiB of log per container, and once full it drops the oldest
 * chunk with Array#shift over a list holding one entry per echoed byte: every further chunk
 * then costs milliseconds (measured: a direct attach fell from ~400 KiB/s to under 2 KiB/s).
 * That is the simulator's cost, not the runner's, so no pod here is driven near its log limit:
 * each throughput trial gets a fresh pair of pods and stops at this much output.
 */
const OUTPUT_BUDGET_BYTES = 1536 * 1024;

/**
 * `firstEchoMs`: from the terminal's open to its first keystroke's echo, each side. The runner's
 * first attach holds keystrokes until the pod log is joined to its output (docs/kubernetes.md
 * "Terminal": up to 300 ms for an app that prints nothing, which `cat` is), a one-off wait of
 * the terminal's start, not of its output: measured here on its own, before any trial, so the
 * throughput trials (bounded by bytes, about 0.3 s each) time output alone.
 */
export type Pair = { runnerSide: Side; directSide: Side; firstEchoMs: { runner: number; direct: number }; close(): Promise<void> };

/** Time to the echo of one keystroke on a terminal just opened; the pending line is cleared. */
async function firstEcho(side: Side, openedAt: number): Promise<number> {
  const mark = side.counter.total;
  side.send(Buffer.from("x"));
  await side.counter.until(mark + 1);
  const ms = since(openedAt);
  side.send(KILL_LINE);
  await side.counter.until(mark + 4);
  return ms;
}

let pairSerial = 0;

/** A runner session with its terminal, and a copy of its pod created and attached directly. */
export async function openPair(runner: BenchRunner): Promise<Pair> {
  const { client, core, kubeConfig } = runner;
  const { sessionId } = await startSession(client);
  const template = await sessionPod(core, sessionId);

  const runnerOpening = performance.now();
  const terminal = client.terminal(sessionId);
  const runnerCounter = new ByteCounter();
  const reading = (async () => {
    for await (const frame of terminal.frames()) if (frame.kind === "bytes") runnerCounter.add(frame.payload.byteLength);
  })();
  await terminal.opened;
  const runnerSide: Side = { counter: runnerCounter, send: (bytes) => terminal.socket.send(bytes) };
  const runnerFirstEcho = await firstEcho(runnerSide, runnerOpening);

  const directName = `bench-direct-terminal-${pairSerial++}`;
  const body = podCopy(template, directName);
  body.metadata!.labels = { ...DIRECT_LABEL };
  const created = await core.createNamespacedPod({ namespace: SESSION_NAMESPACE, body });
  await watchUntilRunning(kubeConfig, directName, created.metadata!.resourceVersion!);
  const directCounter = new ByteCounter();
  const directOpening = performance.now();
  const attachment = await attachContainer(kubeConfig, {
    namespace: SESSION_NAMESPACE,
    pod: directName,
    container: "session",
    tty: true,
    onOutput: (bytes) => directCounter.add(bytes.byteLength),
  });
  const directSide: Side = { counter: directCounter, send: (bytes) => attachment.writeStdin(bytes) };
  const directFirstEcho = await firstEcho(directSide, directOpening);
  return {
    runnerSide,
    directSide,
    firstEchoMs: { runner: runnerFirstEcho, direct: directFirstEcho },
    async close() {
      attachment.close();
      terminal.close();
      await reading.catch(() => undefined);
      await stopSessions(client, core, [sessionId]);
      await clearDirectPods(core);
    },
  };
}

export async function runTerminalBench(runner: BenchRunner, options: TerminalOptions): Promise<Row[]> {
  // Round trips on one pair; warm-up of both paths first, discarded.
  const echoRunner: number[] = [];
  const echoDirect: number[] = [];
  const firstEchoRunner: number[] = [];
  const firstEchoDirect: number[] = [];
  const opened = async () => {
    const pair = await openPair(runner);
    firstEchoRunner.push(pair.firstEchoMs.runner);
    firstEchoDirect.push(pair.firstEchoMs.direct);
    return pair;
  };
  const echoPair = await opened();
  try {
    await echoBatch(echoPair.runnerSide, 20);
    await echoBatch(echoPair.directSide, 20);
    for (let b = 0; b < options.echoBatches; b++) {
      echoRunner.push(...(await echoBatch(echoPair.runnerSide, options.echoPerBatch)));
      echoDirect.push(...(await echoBatch(echoPair.directSide, options.echoPerBatch)));
    }
  } finally {
    await echoPair.close();
  }

  // Throughput: a fresh pair per trial (see OUTPUT_BUDGET_BYTES), runner then baseline.
  const rateRunner: number[] = [];
  const rateDirect: number[] = [];
  const framesRunner: number[] = [];
  const framesDirect: number[] = [];
  // CPU the two processes spend per output chunk while the runner's trials run.
  const cpuSpent = { api: 0, supervisor: 0, chunks: 0, kib: 0 };
  // CPU of every process on the bytes' path, in cores, for the runner's trials (api, supervisor
  // and this process: the simulated cluster and the client) and the direct ones (this process):
  // on a 2-core machine, whether the runner's path is bound by CPU or by waiting.
  const busy = { runner: { cpuMs: 0, seconds: 0 }, direct: { cpuMs: 0, seconds: 0 } };
  for (let t = 0; t < options.trials + 1; t++) {
    const pair = await opened();
    try {
      // The first pair only warms both paths up.
      if (t === 0) {
        await throughput(pair.runnerSide, 200);
        await throughput(pair.directSide, 200);
        continue;
      }
      const before = await cpuSnapshot(runner);
      const r = await throughput(pair.runnerSide, options.trialMs);
      const after = await cpuSnapshot(runner);
      cpuSpent.api += after.api - before.api;
      cpuSpent.supervisor += after.supervisor - before.supervisor;
      cpuSpent.chunks += r.frames;
      cpuSpent.kib += r.bytes / 1024;
      busy.runner.cpuMs += after.api - before.api + after.supervisor - before.supervisor + after.bench - before.bench;
      busy.runner.seconds += r.seconds;
      const directBefore = await cpuSnapshot(runner);
      const d = await throughput(pair.directSide, options.trialMs);
      busy.direct.cpuMs += (await cpuSnapshot(runner)).bench - directBefore.bench;
      busy.direct.seconds += d.seconds;
      rateRunner.push(r.bytesPerSecond / 1024);
      rateDirect.push(d.bytesPerSecond / 1024);
      framesRunner.push(r.framesPerSecond);
      framesDirect.push(d.framesPerSecond);
    } finally {
      await pair.close();
    }
  }

  const section = "4 terminal";
  const er = summarize(echoRunner);
  const ed = summarize(echoDirect);
  const rr = summarize(rateRunner);
  const rd = summarize(rateDirect);
  const rateRatio = ratio(rr.median, rd.median);
  const p99Gap = er.p99 - ed.p99;
  return [
    {
      section,
      metric: "output throughput (pod → WebSocket)",
      value: rr,
      baseline: rd,
      unit: "KiB/s",
      ratio: rateRatio,
      compare: "p50",
      target: "≥ 0.5× baseline",
      verdict: rateRatio >= 0.5 ? "met" : "MISSED",
    },
    { section, metric: "  output chunks per second", value: summarize(framesRunner), baseline: summarize(framesDirect), unit: "chunks/s", ratio: ratio(summarize(framesRunner).median, summarize(framesDirect).median), compare: "p50" },
    { section, metric: "  CPU per output chunk: api process", value: (cpuSpent.api * 1000) / cpuSpent.chunks, unit: "µs" },
    { section, metric: "  CPU per output chunk: supervisor", value: (cpuSpent.supervisor * 1000) / cpuSpent.chunks, unit: "µs" },
    // Per chunk charges a joined frame for all the bytes it carries; per KiB compares across builds.
    { section, metric: "  CPU per KiB relayed: api process", value: (cpuSpent.api * 1000) / cpuSpent.kib, unit: "µs" },
    { section, metric: "  CPU per KiB relayed: supervisor", value: (cpuSpent.supervisor * 1000) / cpuSpent.kib, unit: "µs" },
    {
      section,
      metric: "  CPU in use while output flows (every process on the path)",
      value: busy.runner.cpuMs / 1000 / busy.runner.seconds,
      baseline: busy.direct.cpuMs / 1000 / busy.direct.seconds,
      unit: `cores of ${availableParallelism()}`,
    },
    { section, metric: "stdin → echo round trip (p50)", value: er, baseline: ed, unit: "ms", ratio: ratio(er.median, ed.median), compare: "p50" },
    {
      section,
      metric: "stdin → echo round trip (p99)",
      value: er,
      baseline: ed,
      unit: "ms",
      ratio: ratio(er.p99, ed.p99),
      compare: "p99",
      target: "p99 ≤ baseline + 2 ms",
      verdict: p99Gap <= 2 ? "met" : "MISSED",
      note: `runner p99 − baseline p99 = ${p99Gap.toFixed(2)} ms`,
    },
    { section, metric: "first keystroke's echo after the terminal opens", value: summarize(firstEchoRunner), baseline: summarize(firstEchoDirect), unit: "ms", compare: "p50" },
  ];
}
