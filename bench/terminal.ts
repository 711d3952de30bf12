/**
 * Section 4: the terminal through both processes (pod → supervisor's attach → internal socket
 * → api → WebSocket client) against the direct baseline: the runner's own `attachContainer`
 * (src/kube/attach.ts, the channel.k8s.io client the supervisor uses, built on client-node's
 * KubeConfig) attached to a copy of the session's pod created directly. Using the runner's
 * attach code for the baseline makes the ratio the cost of the two relay hops alone.
 *
 * The simulated container is a tty running `cat`: its line discipline echoes every stdin byte
 * as its own output chunk, then prints the completed line. So a line of L bytes sent comes back
 * as L one-byte chunks, "\r\n", and the line with "\r\n": 2L + 4 bytes in L + 2 chunks. The
 * throughput figures are therefore dominated by per-chunk cost, for runner and baseline alike.
 */
import { attachContainer } from "../src/kube/attach.ts";
import type { Row } from "./support/report.ts";
import { ByteCounter } from "./support/bytes.ts";
import { type BenchRunner, cpuSnapshot, podCopy, SESSION_NAMESPACE } from "./support/runner.ts";
import { clearDirectPods, DIRECT_LABEL, sessionPod, startSession, stopSessions, watchUntilRunning } from "./support/sessions.ts";
import { ratio, since, summarize } from "./support/stats.ts";

export type TerminalOptions = { echoBatches: number; echoPerBatch: number; trials: number; trialMs: number };
export const TERMINAL_FULL: TerminalOptions = { echoBatches: 12, echoPerBatch: 25, trials: 6, trialMs: 2000 };
export const TERMINAL_QUICK: TerminalOptions = { echoBatches: 2, echoPerBatch: 25, trials: 2, trialMs: 500 };

const LINE_BYTES = 1024;
/** Lines in flight: enough to keep both hops busy, far below the attach's 1 MiB stdin cap. */
const WINDOW = 4;
const KILL_LINE = Buffer.from([0x15]);

type Side = { counter: ByteCounter; send(bytes: Uint8Array): void };

/** Round trips of one keystroke to its echo; the pending line is cleared after each batch. */
async function echoBatch(side: Side, count: number): Promise<number[]> {
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
async function throughput(side: Side, ms: number): Promise<{ bytesPerSecond: number; framesPerSecond: number }> {
  const line = Buffer.alloc(LINE_BYTES + 1, "a".charCodeAt(0));
  line[LINE_BYTES] = 0x0d;
  const perLine = 2 * LINE_BYTES + 4;
  const startBytes = side.counter.total;
  const startFrames = side.counter.frames;
  const start = performance.now();
  let sent = 0;
  while (since(start) < ms) {
    if (sent >= WINDOW) await side.counter.until(startBytes + (sent - WINDOW + 1) * perLine);
    side.send(line);
    sent += 1;
  }
  await side.counter.until(startBytes + sent * perLine);
  const seconds = since(start) / 1000;
  return { bytesPerSecond: (side.counter.total - startBytes) / seconds, framesPerSecond: (side.counter.frames - startFrames) / seconds };
}

export async function runTerminalBench(runner: BenchRunner, options: TerminalOptions): Promise<Row[]> {
  const { client, core, kubeConfig } = runner;
  const { sessionId } = await startSession(client);
  const template = await sessionPod(core, sessionId);

  const terminal = client.terminal(sessionId);
  await terminal.opened;
  const runnerCounter = new ByteCounter();
  const reading = (async () => {
    for await (const frame of terminal.frames()) if (frame.kind === "bytes") runnerCounter.add(frame.payload.byteLength);
  })();
  const runnerSide: Side = { counter: runnerCounter, send: (bytes) => terminal.socket.send(bytes) };

  const directName = "bench-direct-terminal";
  const body = podCopy(template, directName);
  body.metadata!.labels = { ...DIRECT_LABEL };
  const created = await core.createNamespacedPod({ namespace: SESSION_NAMESPACE, body });
  await watchUntilRunning(kubeConfig, directName, created.metadata!.resourceVersion!);
  const directCounter = new ByteCounter();
  const attachment = await attachContainer(kubeConfig, {
    namespace: SESSION_NAMESPACE,
    pod: directName,
    container: "session",
    tty: true,
    onOutput: (bytes) => directCounter.add(bytes.byteLength),
  });
  const directSide: Side = { counter: directCounter, send: (bytes) => attachment.writeStdin(bytes) };

  try {
    // Warm-up of both paths, discarded; the throughput warm-up comes after the round trips so
    // its garbage is not collected in the middle of them.
    await echoBatch(runnerSide, 20);
    await echoBatch(directSide, 20);

    const echoRunner: number[] = [];
    const echoDirect: number[] = [];
    for (let b = 0; b < options.echoBatches; b++) {
      echoRunner.push(...(await echoBatch(runnerSide, options.echoPerBatch)));
      echoDirect.push(...(await echoBatch(directSide, options.echoPerBatch)));
    }
    await throughput(runnerSide, 200);
    await throughput(directSide, 200);
    const rateRunner: number[] = [];
    const rateDirect: number[] = [];
    const framesRunner: number[] = [];
    const framesDirect: number[] = [];
    // CPU the two processes spend per output chunk while the runner's trials run.
    const cpuSpent = { api: 0, supervisor: 0, chunks: 0 };
    for (let t = 0; t < options.trials; t++) {
      const before = await cpuSnapshot(runner);
      const chunksBefore = runnerCounter.frames;
      const r = await throughput(runnerSide, options.trialMs);
      const after = await cpuSnapshot(runner);
      cpuSpent.api += after.api - before.api;
      cpuSpent.supervisor += after.supervisor - before.supervisor;
      cpuSpent.chunks += runnerCounter.frames - chunksBefore;
      const d = await throughput(directSide, options.trialMs);
      rateRunner.push(r.bytesPerSecond / 1024);
      rateDirect.push(d.bytesPerSecond / 1024);
      framesRunner.push(r.framesPerSecond);
      framesDirect.push(d.framesPerSecond);
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
    ];
  } finally {
    attachment.close();
    terminal.close();
    await reading.catch(() => undefined);
    await stopSessions(client, core, [sessionId]);
    await clearDirectPods(core);
  }
}
