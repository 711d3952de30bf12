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
 *
 * Two phases: a burst (frames written as fast as the relay takes them) gives the delivery
 * rate; then a steady trickle well below that rate gives the lag a subscriber sees when the
 * runner is not simply working through a backlog.
 */
import { createServer, type Server, type ServerResponse } from "node:http";
import { setTimeout as sleep } from "node:timers/promises";
import { RUN_INSPECT_PORT } from "../src/kube/specs/run-pod.ts";
import type { Row } from "./support/report.ts";
import { type BenchRunner, cpuSnapshot } from "./support/runner.ts";
import { sessionBody } from "../test/support/session-body.ts";
import { sessionPod, startSession, stopSessions, subscribe } from "./support/sessions.ts";
import { since, summarize } from "./support/stats.ts";

export type FanoutOptions = { subscribers: number; burst: number; paced: number; pacedPerSecond: number };
export const FANOUT_FULL: FanoutOptions = { subscribers: 100, burst: 10_000, paced: 500, pacedPerSecond: 100 };
export const FANOUT_QUICK: FanoutOptions = { subscribers: 100, burst: 1000, paced: 100, pacedPerSecond: 100 };

const TICK = "Bench.Tick";
const PHASE_TIMEOUT_MS = 180_000;

type Phase = "burst" | "paced";
type Tick = { phase: Phase; i: number; t: number };

class Subscriber {
  readonly lags: Record<Phase, number[]> = { burst: [], paced: [] };
  readonly lastAt: Record<Phase, number> = { burst: 0, paced: 0 };
  gaps = 0;
  stop: () => void = () => undefined;
}

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

let frameId = 0;
/** Writes one kernel frame; resolves when the relay's connection can take more. */
async function writeTick(res: ServerResponse, phase: Phase, i: number): Promise<void> {
  const tick: Tick = { phase, i, t: performance.now() };
  const frame = { kind: "event", timestamp: new Date().toISOString(), event: TICK, payload: tick };
  if (!res.write(`id: ${++frameId}\ndata: ${JSON.stringify(frame)}\n\n`)) await new Promise((resolve) => res.once("drain", resolve));
}

export async function runFanoutBench(runner: BenchRunner, options: FanoutOptions): Promise<Row[]> {
  const { client, core } = runner;
  const { sessionId } = await startSession(client, sessionBody({ simulate: { "kernel-debug": "off" } }, { inspect: true }));
  const podIp = (await sessionPod(core, sessionId)).status?.podIP;
  if (!podIp) throw new Error("the session pod has no IP");

  const last: Record<Phase, number> = { burst: options.burst, paced: options.paced };
  const finished: Record<Phase, number> = { burst: 0, paced: 0 };
  const phaseDone: Record<Phase, () => void> = { burst: () => undefined, paced: () => undefined };
  const phaseEnded = (phase: Phase) =>
    new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`${phase}: not every subscriber got the last event within ${PHASE_TIMEOUT_MS / 1000} s`)), PHASE_TIMEOUT_MS);
      phaseDone[phase] = () => {
        clearTimeout(timer);
        resolve();
      };
    });
  const burstEnded = phaseEnded("burst");
  const pacedEnded = phaseEnded("paced");
  // Awaited below; these only keep a phase that never ran from reporting an unhandled rejection.
  burstEnded.catch(() => undefined);
  pacedEnded.catch(() => undefined);

  const subscribers: Subscriber[] = [];
  const ready: Promise<void>[] = [];
  for (let s = 0; s < options.subscribers; s++) {
    const sub = new Subscriber();
    let caughtUp!: () => void;
    ready.push(new Promise<void>((resolve) => (caughtUp = resolve)));
    sub.stop = subscribe(client, sessionId, (item) => {
      if ("gap" in item) {
        sub.gaps += 1;
        return;
      }
      const event = item.event;
      // Replay reaches `running` first: from then on the subscriber is live.
      if (event.type === "status" && event.status.kind === "running") caughtUp();
      if (event.type !== "debug" || event.frame.event !== TICK) return;
      const tick = event.frame.payload as Tick;
      const now = performance.now();
      sub.lags[tick.phase].push(now - tick.t);
      if (tick.i === last[tick.phase]) {
        sub.lastAt[tick.phase] = now;
        if (++finished[tick.phase] === options.subscribers) phaseDone[tick.phase]();
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
    for (let i = 1; i <= options.burst; i++) await writeTick(res, "burst", i);
    const emitMs = since(start);
    await burstEnded;
    const burstMs = since(start);
    const cpuAfter = await cpuSnapshot(runner);

    const interval = 1000 / options.pacedPerSecond;
    const pacedStart = performance.now();
    for (let i = 1; i <= options.paced; i++) {
      await writeTick(res, "paced", i);
      // Scheduled against the phase's start, so a late timer does not slow the whole rate.
      await sleep(Math.max(0, pacedStart + i * interval - performance.now()));
    }
    await pacedEnded;

    const deliveries = options.burst * options.subscribers;
    // CPU time per delivery: unlike a busy share, it does not shrink when other work on a
    // shared machine takes the cores, so it says which process the fan-out costs most.
    const perDelivery = (key: keyof typeof cpuAfter) => ((cpuAfter[key] - cpuBefore[key]) * 1000) / deliveries;
    // The slowest subscriber is the one that saw the phase's last frame last.
    const slowest = (phase: Phase) => subscribers.reduce((a, b) => (b.lastAt[phase] > a.lastAt[phase] ? b : a));
    const spread = (phase: Phase) => slowest(phase).lastAt[phase] - Math.min(...subscribers.map((s) => s.lastAt[phase]));
    const section = "5 SSE fan-out";
    const n = options.subscribers;
    const gaps = subscribers.reduce((sum, s) => sum + s.gaps, 0);
    return [
      { section, metric: `burst of ${options.burst}: events delivered per second, ${n} subscribers`, value: Math.round((deliveries / burstMs) * 1000), unit: "events/s" },
      { section, metric: "  per subscriber", value: Math.round((options.burst / burstMs) * 1000), unit: "events/s" },
      { section, metric: "  kernel frames taken by the relay per second", value: Math.round((options.burst / emitMs) * 1000), unit: "frames/s" },
      { section, metric: "  slowest subscriber's lag (backlog included)", value: summarize(slowest("burst").lags.burst), unit: "ms" },
      { section, metric: "  last event: first vs slowest subscriber", value: spread("burst"), unit: "ms" },
      { section, metric: "  CPU per delivered event: api process", value: perDelivery("api"), unit: "µs" },
      { section, metric: "  CPU per delivered event: supervisor", value: perDelivery("supervisor"), unit: "µs" },
      { section, metric: "  CPU per delivered event: bench (clients, inspector)", value: perDelivery("bench"), unit: "µs" },
      { section, metric: `steady ${options.pacedPerSecond} events/s: slowest subscriber's lag`, value: summarize(slowest("paced").lags.paced), unit: "ms" },
      { section, metric: "  all subscribers' lag", value: summarize(subscribers.flatMap((s) => s.lags.paced)), unit: "ms" },
      { section, metric: "  last event: first vs slowest subscriber", value: spread("paced"), unit: "ms" },
      { section, metric: "gap markers received (history overrun)", value: gaps, unit: "count" },
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
