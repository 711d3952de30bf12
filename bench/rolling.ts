/**
 * Section 9, a rolling update under live terminals (docs/replicas.md): three replicas and N
 * sessions, each printing a counter with its terminal open through one of them, the replicas
 * replaced one at a time as a Deployment's RollingUpdate with `maxUnavailable: 0` does: the new
 * replica joins and its shards settle, then the old one leaves (SIGTERM to its supervisor, then
 * its api) and the shards settle again. Clients reconnect with their seq through a replica that
 * is up, as through the Service. Counted per session: lost (not `running`, or its pod replaced
 * or a container restarted), lines shown twice, lines missing with no `gap` told, and each
 * reconnect's time from the socket's close to being served again.
 */
import { setMaxListeners } from "node:events";
import type { CoreV1Api } from "@kubernetes/client-node";
import { retryingOn503 } from "../test/support/retry.ts";
import { sessionBody } from "../test/support/session-body.ts";
import { ticksOf } from "../test/support/ticking-terminal.ts";
import { duplicates, missing, shardsSettled, startReplica } from "./support/replicas.ts";
import type { Row } from "./support/report.ts";
import { type BenchRunner, type EntryMode, SESSION_NAMESPACE } from "./support/runner.ts";
import { inBatches, startSession } from "./support/sessions.ts";
import { summarize } from "./support/stats.ts";

export type RollingOptions = { sessions: number };

const SECTION = "9 replica handover";
const TICK_MS = 500;
const RECONNECT_EVERY_MS = 100;
/** Reading before the first replica leaves and after the last, so every client has output on both sides. */
const READ_AROUND_MS = 3_000;
const SETTLE_MS = 120_000;
const REPLICAS = ["bench-a", "bench-b", "bench-c"];

/** What one client saw of its session's terminal, across all its connections. */
type Client = { sessionId: string; lastSeq: number; text: string; gaps: number; reconnectMs: number[] };

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

export async function runRollingUpdate(mode: EntryMode, options: RollingOptions): Promise<Row[]> {
  const host = await startReplica(mode, REPLICAS[0]!);
  const started = [host];
  const live = new Map([[REPLICAS[0]!, host]]);
  const stopReading = new AbortController();
  // Every client's open terminal listens for the stop.
  setMaxListeners(0, stopReading.signal);
  try {
    for (const name of REPLICAS.slice(1)) {
      const replica = await startReplica(mode, name, host);
      started.push(replica);
      live.set(name, replica);
    }
    await shardsSettled(host, [...live.keys()], SETTLE_MS);
    const clients = await inBatches(Array.from({ length: options.sessions }, (_, index) => index), 10, async (index): Promise<Client> => {
      const via = [...live.values()][index % live.size]!;
      const { sessionId } = await startSession(via.client, sessionBody({ simulate: { "tick-ms": TICK_MS } }));
      return { sessionId, lastSeq: 0, text: "", gaps: 0, reconnectMs: [] };
    });
    const podsBefore = await sessionPods(host.core);
    const reading = clients.map((client, index) => follow(client, index, () => [...live.values()], stopReading.signal));
    await sleep(READ_AROUND_MS);

    const rollStart = performance.now();
    for (const old of REPLICAS) {
      const successor = `${old}-2`;
      const fresh = await startReplica(mode, successor, host);
      started.push(fresh);
      live.set(successor, fresh);
      await shardsSettled(host, [...live.keys()], SETTLE_MS);
      const leaving = live.get(old)!;
      live.delete(old);
      await leaving.stopSupervisor("SIGTERM");
      await leaving.stopApi();
      await shardsSettled(host, [...live.keys()], SETTLE_MS);
    }
    const rollSeconds = (performance.now() - rollStart) / 1000;
    await sleep(READ_AROUND_MS);
    stopReading.abort();
    await Promise.all(reading);

    const answering = [...live.values()][0]!;
    // A session whose shard has just settled may answer 503 for a moment (the contract's "retry").
    const statuses = await Promise.all(clients.map((client) => retryingOn503(`session ${client.sessionId}`, () => answering.client.getSession(client.sessionId), SETTLE_MS)));
    const lost = statuses.filter((document) => document.status.kind !== "running").length;
    const restarted = changedPods(podsBefore, await sessionPods(host.core));
    const ticks = clients.map((client) => ticksOf(client.text));
    const twice = ticks.reduce((sum, shown) => sum + duplicates(shown), 0);
    const unexplained = clients.reduce((sum, client, index) => sum + (client.gaps === 0 ? missing(ticks[index]!) : 0), 0);
    const gapped = clients.filter((client) => client.gaps > 0).length;
    const reconnectMs = summarize(clients.flatMap((client) => client.reconnectMs));
    const what = "rolling update (3 replicas replaced one by one)";
    const note = `${options.sessions} sessions printing every ${TICK_MS} ms, terminals open through the replicas, clients retry every ${RECONNECT_EVERY_MS} ms; the roll took ${rollSeconds.toFixed(1)} s`;
    const zero = (value: number) => ({ target: "0", verdict: value === 0 ? ("met" as const) : ("MISSED" as const) });
    return [
      { section: SECTION, metric: `${what}: sessions lost or apps restarted`, value: lost + restarted, unit: `of ${options.sessions}`, ...zero(lost + restarted), note },
      { section: SECTION, metric: `${what}: lines shown twice`, value: twice, unit: "lines", ...zero(twice) },
      { section: SECTION, metric: `${what}: lines missing with no gap told`, value: unexplained, unit: "lines", ...zero(unexplained) },
      { section: SECTION, metric: `${what}: clients told of a gap`, value: gapped, unit: `of ${options.sessions}` },
      { section: SECTION, metric: `${what}: reconnects`, value: reconnectMs.n, unit: "" },
      { section: SECTION, metric: `${what}: client close → reconnected (p50)`, value: reconnectMs, unit: "ms", compare: "p50" },
      { section: SECTION, metric: `${what}: client close → reconnected (p99)`, value: reconnectMs, unit: "ms", compare: "p99", target: "≤ 3000 ms", verdict: reconnectMs.p99 <= 3_000 ? "met" : "MISSED" },
    ];
  } finally {
    stopReading.abort();
    for (const runner of started.reverse()) await runner.close();
  }
}

/**
 * Reads the client's terminal until `stop`, through the replicas up at each (re)connect, one
 * after the other; every connection after a served one that closed is a reconnect, timed from
 * that close to the next `seq` frame.
 */
async function follow(client: Client, index: number, replicas: () => BenchRunner[], stop: AbortSignal): Promise<void> {
  let closedAt: number | undefined;
  for (let turn = index; !stop.aborted; turn += 1) {
    const up = replicas();
    const terminal = up[turn % up.length]!.client.terminal(client.sessionId, { lastSeq: client.lastSeq });
    const close = () => terminal.close();
    stop.addEventListener("abort", close, { once: true });
    let served = false;
    for await (const frame of terminal.frames()) {
      if (frame.kind === "bytes") {
        client.lastSeq = frame.seq;
        client.text += Buffer.from(frame.payload).toString();
      } else if (frame.message.type === "gap") client.gaps += 1;
      else if (frame.message.type === "seq") {
        served = true;
        if (closedAt !== undefined) client.reconnectMs.push(performance.now() - closedAt);
        closedAt = undefined;
      }
    }
    stop.removeEventListener("abort", close);
    if (served) closedAt ??= performance.now();
    else await sleep(RECONNECT_EVERY_MS);
  }
}

type PodState = { uid: string; restarts: number };

async function sessionPods(core: CoreV1Api): Promise<Map<string, PodState>> {
  const list = await core.listNamespacedPod({ namespace: SESSION_NAMESPACE });
  return new Map(list.items.map((pod) => [pod.metadata?.name ?? "", {
    uid: pod.metadata?.uid ?? "",
    restarts: (pod.status?.containerStatuses ?? []).reduce((sum, status) => sum + status.restartCount, 0),
  }]));
}

/** Pods of `before` that are gone, replaced (another uid) or whose containers restarted. */
function changedPods(before: Map<string, PodState>, after: Map<string, PodState>): number {
  return [...before].filter(([name, state]) => after.get(name)?.uid !== state.uid || after.get(name)?.restarts !== state.restarts).length;
}
