/**
 * Section 9, replica handover and takeover (docs/replicas.md): three replicas (api + supervisor
 * each) against one simulated cluster at the default Lease timing (15 s, retry 2 s). N sessions
 * printing a counter are owned by one replica, each with its terminal open through another; the
 * owner gets SIGTERM (a handover) or SIGKILL (a takeover). Per session: the time from the signal
 * until a reconnecting client (every 100 ms, with its seq) is served again, the client's own time
 * from its socket's close to that, and whether any line reached it twice (must be none). Then a
 * rolling update of all three under many live terminals (bench/rolling.ts). First, on a trio of
 * its own, a forwarded terminal's echo against its owner's (bench/forwarded-echo.ts).
 */
import type { Terminal } from "../src/client/index.ts";
import { sessionBody } from "../test/support/session-body.ts";
import { waitFor } from "../test/support/wait.ts";
import { FORWARDED_ECHO_FULL, FORWARDED_ECHO_QUICK, type ForwardedEchoOptions, runForwardedEcho } from "./forwarded-echo.ts";
import { runRollingUpdate } from "./rolling.ts";
import { ticksOf } from "../test/support/ticking-terminal.ts";
import { duplicates, lastTick, shardsSettled, startReplica } from "./support/replicas.ts";
import type { Row } from "./support/report.ts";
import type { BenchRunner, EntryMode } from "./support/runner.ts";
import { startSession } from "./support/sessions.ts";
import { summarize } from "./support/stats.ts";

/**
 * `sessions` for the handover and the takeover; `rollingSessions` for the rolling update
 * (bench/rolling.ts); `forwardedEcho` for the forwarded terminal (bench/forwarded-echo.ts).
 */
export type HandoverOptions = { sessions: number; rollingSessions: number; forwardedEcho: ForwardedEchoOptions };
export const HANDOVER_FULL: HandoverOptions = { sessions: 20, rollingSessions: 200, forwardedEcho: FORWARDED_ECHO_FULL };
export const HANDOVER_QUICK: HandoverOptions = { sessions: 4, rollingSessions: 12, forwardedEcho: FORWARDED_ECHO_QUICK };

const SECTION = "9 replica handover";
const RECONNECT_EVERY_MS = 100;
const SERVED_AGAIN_MS = 60_000;

/** What one client saw of its session's terminal, across its connections. */
type Client = { sessionId: string; lastSeq: number; text: string; gaps: number; closedAt: number; servedAt: number };

export async function runHandoverBench(mode: EntryMode, options: HandoverOptions): Promise<Row[]> {
  return [
    ...(await runForwardedEcho(mode, options.forwardedEcho)),
    ...(await scenario(mode, options, "SIGTERM")),
    ...(await scenario(mode, options, "SIGKILL")),
    ...(await runRollingUpdate(mode, { sessions: options.rollingSessions })),
  ];
}

async function scenario(mode: EntryMode, options: HandoverOptions, signal: "SIGTERM" | "SIGKILL"): Promise<Row[]> {
  const a = await startReplica(mode, "bench-a");
  const started: BenchRunner[] = [a];
  try {
    const owner = await startReplica(mode, "bench-b", a);
    started.push(owner, await startReplica(mode, "bench-c", a));
    await shardsSettled(a, ["bench-a", "bench-b", "bench-c"], SERVED_AGAIN_MS);
    const clients: Client[] = [];
    for (let i = 0; i < options.sessions; i++) {
      const { sessionId } = await startSession(owner.client, sessionBody({ simulate: { "tick-ms": 100 } }));
      clients.push({ sessionId, lastSeq: 0, text: "", gaps: 0, closedAt: 0, servedAt: 0 });
    }
    const first = await Promise.all(clients.map((client) => attachServed(a, client)));
    const signalledAt = performance.now();
    await owner.stopSupervisor(signal);
    await Promise.all(clients.map(async (client, index) => reconnect(a, client, await first[index]!.closed)));
    const tickedBefore = clients.map((client) => lastTick(client.text));
    await Promise.all(clients.map((client, index) => readPast(a, client, tickedBefore[index]!)));

    const servedAfterSignal = summarize(clients.map((client) => client.servedAt - signalledAt));
    const reconnectMs = summarize(clients.map((client) => client.servedAt - client.closedAt));
    const duplicated = clients.reduce((sum, client) => sum + duplicates(ticksOf(client.text)), 0);
    const gapped = clients.filter((client) => client.gaps > 0).length;
    const what = signal === "SIGTERM" ? "handover (SIGTERM of the owner)" : "takeover (SIGKILL of the owner)";
    const note = `${options.sessions} sessions with open terminals through another replica, 3 replicas, lease 15 s, retry 2 s; clients retry every ${RECONNECT_EVERY_MS} ms`;
    return [
      { section: SECTION, metric: `${what}: signal → served again (p50)`, value: servedAfterSignal, unit: "ms", compare: "p50", note },
      { section: SECTION, metric: `${what}: signal → served again (p99)`, value: servedAfterSignal, unit: "ms", compare: "p99" },
      { section: SECTION, metric: `${what}: client close → reconnected (p50)`, value: reconnectMs, unit: "ms", compare: "p50" },
      { section: SECTION, metric: `${what}: client close → reconnected (p99)`, value: reconnectMs, unit: "ms", compare: "p99" },
      { section: SECTION, metric: `${what}: lines shown twice`, value: duplicated, unit: "lines", target: "0", verdict: duplicated === 0 ? "met" : "MISSED" },
      { section: SECTION, metric: `${what}: clients told of a gap`, value: gapped, unit: `of ${options.sessions}` },
    ];
  } finally {
    for (const runner of started.reverse()) await runner.close();
  }
}

/**
 * The first attach, through `via`, until a replica serves it: the handover is measured from a
 * terminal that was showing output (a replica's view of who holds a shard can lag the Leases by
 * a moment, and its answer then is "moving").
 */
async function attachServed(via: BenchRunner, client: Client): Promise<{ closed: Promise<number> }> {
  const deadline = performance.now() + SERVED_AGAIN_MS;
  for (;;) {
    const opened = attach(via, client, client.lastSeq);
    if (await opened.attached) return opened;
    await opened.closed;
    if (performance.now() > deadline) throw new Error(`the terminal of ${client.sessionId} was never served`);
    await new Promise((resolve) => setTimeout(resolve, RECONNECT_EVERY_MS));
  }
}

/** Opens the client's terminal through `via` and reads it in the background until it closes; `attached` says whether it was served. */
function attach(via: BenchRunner, client: Client, lastSeq?: number): { terminal: Terminal; attached: Promise<boolean>; closed: Promise<number> } {
  const terminal = via.client.terminal(client.sessionId, lastSeq === undefined ? {} : { lastSeq });
  let seen!: (served: boolean) => void;
  const attached = new Promise<boolean>((resolve) => (seen = resolve));
  const closed = (async () => {
    for await (const frame of terminal.frames()) {
      if (frame.kind === "control" && frame.message.type === "seq") seen(true);
      if (frame.kind === "control" && frame.message.type === "gap") client.gaps += 1;
      if (frame.kind !== "bytes") continue;
      client.lastSeq = frame.seq;
      client.text += Buffer.from(frame.payload).toString();
    }
    seen(false);
    return performance.now();
  })();
  return { terminal, attached, closed };
}

/** After the close: reconnect with the seq held until a replica serves the terminal again. */
async function reconnect(via: BenchRunner, client: Client, closedAt: number): Promise<void> {
  client.closedAt = closedAt;
  await waitFor(`the terminal of ${client.sessionId} served again`, async () => {
    const terminal = via.client.terminal(client.sessionId, { lastSeq: client.lastSeq });
    const first = await terminal.frames().next();
    if (!first.done && first.value.kind === "control" && first.value.message.type === "seq") {
      client.servedAt = performance.now();
      terminal.close();
      return true;
    }
    terminal.close();
    await new Promise((resolve) => setTimeout(resolve, RECONNECT_EVERY_MS));
    return undefined;
  }, SERVED_AGAIN_MS);
}

/** Reads with the seq held until a line after `tick` arrives (the output continues). */
async function readPast(via: BenchRunner, client: Client, tick: number): Promise<void> {
  const { terminal, closed } = attach(via, client, client.lastSeq);
  await waitFor(`a line after tick ${tick}`, () => lastTick(client.text) > tick || undefined, SERVED_AGAIN_MS);
  terminal.close();
  await closed;
}
