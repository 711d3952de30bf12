/**
 * Section 5: SSE fan-out, one session and many subscribers. The source of events is the one a
 * run session has in quantity: kernel debug frames, which the supervisor's debug relay reads
 * from the kernel's inspector inside the pod and appends to the session's event history.
 *
 * The bench plays the kernel: the session starts with `inspect` on and the simulated
 * container's own inspector off (`kernel-debug: off`), and the bench listens on the pod's IP
 * at the inspector port, where the relay (re)connects every 500 ms until it finds a listener.
 * Frames carry the bench's clock, and the subscribers run in the same process, so each
 * delivery's lag is read directly.
 */
import { createServer, type Server, type ServerResponse } from "node:http";
import { RUN_INSPECT_PORT } from "../src/kube/specs/run-pod.ts";
import type { Row } from "./support/report.ts";
import type { BenchRunner } from "./support/runner.ts";
import { cpuSnapshot, sessionBody } from "./support/runner.ts";
import { sessionPod, startSession, stopSessions, subscribe } from "./support/sessions.ts";
import { since, summarize } from "./support/stats.ts";

export type FanoutOptions = { subscribers: number; events: number };
export const FANOUT_FULL: FanoutOptions = { subscribers: 100, events: 10_000 };
export const FANOUT_QUICK: FanoutOptions = { subscribers: 100, events: 1000 };

const TICK = "Bench.Tick";

type Subscriber = { received: number; gaps: number; lags: number[]; lastAt: number; stop(): void };

/** An inspector on ip:port that hands over its response stream once the relay connects. */
function fakeInspector(ip: string): Promise<{ server: Server; connected: Promise<ServerResponse> }> {
  let connectedResolve!: (res: ServerResponse) => void;
  const connected = new Promise<ServerResponse>((resolve) => (connectedResolve = resolve));
  const server = createServer((req, res) => {
    if (req.url?.startsWith("/events") !== true) {
      res.writeHead(404).end();
      return;
    }
    res.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache" });
    res.flushHeaders();
    connectedResolve(res);
  });
  return new Promise((resolve, reject) => {
    server.once("error", reject);
    server.listen(RUN_INSPECT_PORT, ip, () => resolve({ server, connected }));
  });
}

/** Writes `count` frames as fast as the relay's connection accepts them. */
async function emit(res: ServerResponse, count: number): Promise<void> {
  for (let i = 1; i <= count; i++) {
    const frame = { kind: "event", timestamp: new Date().toISOString(), event: TICK, payload: { i, t: performance.now() } };
    if (!res.write(`id: ${i}\ndata: ${JSON.stringify(frame)}\n\n`)) await new Promise((resolve) => res.once("drain", resolve));
  }
}

export async function runFanoutBench(runner: BenchRunner, options: FanoutOptions): Promise<Row[]> {
  const { client, core } = runner;
  const { sessionId } = await startSession(client, sessionBody({ "kernel-debug": "off" }, { inspect: true }));
  const podIp = (await sessionPod(core, sessionId)).status?.podIP;
  if (!podIp) throw new Error("the session pod has no IP");

  let allDone!: () => void;
  const done = new Promise<void>((resolve) => (allDone = resolve));
  let finished = 0;
  const subscribers: Subscriber[] = [];
  const ready: Promise<void>[] = [];
  for (let s = 0; s < options.subscribers; s++) {
    const sub: Subscriber = { received: 0, gaps: 0, lags: [], lastAt: 0, stop: () => undefined };
    let caughtUp!: () => void;
    ready.push(new Promise<void>((resolve) => (caughtUp = resolve)));
    sub.stop = subscribe(client, sessionId, (item) => {
      // Replay reaches `running` first: from then on the subscriber is live.
      if ("event" in item && item.event.type === "status" && item.event.status.kind === "running") caughtUp();
      if ("gap" in item) {
        sub.gaps += 1;
        return;
      }
      if (item.event.type !== "debug" || item.event.frame.event !== TICK) return;
      const payload = item.event.frame.payload as { i: number; t: number };
      sub.lags.push(performance.now() - payload.t);
      sub.received += 1;
      if (payload.i === options.events) {
        sub.lastAt = performance.now();
        if (++finished === options.subscribers) allDone();
      }
    }).stop;
    subscribers.push(sub);
  }
  await Promise.all(ready);

  const inspector = await fakeInspector(podIp);
  try {
    const res = await inspector.connected;
    const cpuBefore = await cpuSnapshot(runner);
    const start = performance.now();
    await emit(res, options.events);
    const emitMs = since(start);
    const timeout = setTimeout(() => allDone(), 120_000);
    await done;
    clearTimeout(timeout);
    const elapsedMs = since(start);
    const cpuAfter = await cpuSnapshot(runner);
    // CPU time per delivery: unlike a busy share, it does not shrink when other work on a
    // shared machine takes the cores, so it says which process the fan-out costs most.
    const perDelivery = (key: keyof typeof cpuAfter, deliveries: number) => ((cpuAfter[key] - cpuBefore[key]) * 1000) / Math.max(1, deliveries);

    const delivered = subscribers.reduce((n, s) => n + s.received, 0);
    const gaps = subscribers.reduce((n, s) => n + s.gaps, 0);
    // The slowest subscriber is the one that saw the last frame last.
    const slowest = subscribers.reduce((a, b) => (b.lastAt === 0 || b.lastAt > a.lastAt ? b : a));
    const slowestLag = summarize(slowest.lags);
    const firstFinish = Math.min(...subscribers.map((s) => s.lastAt || Number.POSITIVE_INFINITY));
    const section = "5 SSE fan-out";
    const incomplete = subscribers.filter((s) => s.received < options.events).length;
    return [
      { section, metric: `events delivered per second, ${options.subscribers} subscribers`, value: Math.round((delivered / elapsedMs) * 1000), unit: "events/s" },
      { section, metric: "  per subscriber", value: Math.round((options.events / elapsedMs) * 1000), unit: "events/s" },
      { section, metric: `  kernel frames accepted per second (${options.events})`, value: Math.round((options.events / emitMs) * 1000), unit: "frames/s" },
      { section, metric: "slowest subscriber's lag (emit → receive)", value: slowestLag, unit: "ms" },
      { section, metric: "  last event: first vs slowest subscriber", value: slowest.lastAt - firstFinish, unit: "ms" },
      { section, metric: "  CPU per delivered event: api process", value: perDelivery("api", delivered), unit: "µs" },
      { section, metric: "  CPU per delivered event: supervisor", value: perDelivery("supervisor", delivered), unit: "µs" },
      { section, metric: "  CPU per delivered event: bench (clients, inspector)", value: perDelivery("bench", delivered), unit: "µs" },
      { section, metric: "  gap markers received", value: gaps, unit: "count" },
      {
        section,
        metric: "  subscribers short of any event",
        value: incomplete,
        unit: "count",
        ...(incomplete > 0 && { note: `${incomplete} of ${options.subscribers} subscribers did not receive all ${options.events} events within 2 minutes` }),
      },
    ];
  } finally {
    for (const s of subscribers) s.stop();
    await new Promise<void>((resolve) => {
      inspector.server.close(() => resolve());
      inspector.server.closeAllConnections();
    });
    await stopSessions(client, core, [sessionId]);
  }
}
