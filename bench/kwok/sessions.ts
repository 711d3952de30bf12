/**
 * Many sessions through several replicas, as a well-behaved client makes them: creates spread
 * round-robin over the replicas with bounded concurrency, a 503 or 429 tried again after its
 * `retry-after` (docs/api.md), and progress read from each replica's `runner_sessions` gauge
 * rather than one event stream per session (10,000 streams would measure the streams).
 */
import { parseExposition } from "../../test/support/metrics.ts";
import { sessionBody } from "../../test/support/session-body.ts";
import { inBatches } from "../support/sessions.ts";
import type { KwokReplica } from "./replicas.ts";

/** About two minutes of 503s (retry-after 1 s): a replica whose shards lapsed under load gets them back in that time, or never. */
const MAX_ATTEMPTS = 120;

export type Created = { sessionId: string; via: number; retries: number };

async function pause(ms: number): Promise<void> {
  await new Promise((resolve) => setTimeout(resolve, ms));
}

/** One create through `replica`, tried again on 503/429 (and on a refused connection) after the pause it names. */
async function createOne(replica: KwokReplica, via: number): Promise<Created> {
  const body = JSON.stringify(sessionBody({ image: "k8s-runner.local/telo-kernel:standin" }));
  for (let attempt = 1; ; attempt++) {
    const response = await fetch(`${replica.baseUrl}/v1/sessions`, { method: "POST", headers: { "content-type": "application/json" }, body }).catch((error: Error) => error);
    if (!(response instanceof Error) && response.status === 201) {
      const { sessionId } = (await response.json()) as { sessionId: string };
      return { sessionId, via, retries: attempt - 1 };
    }
    const status = response instanceof Error ? response.message : `${response.status} ${await response.text()}`;
    const passing = response instanceof Error || response.status === 503 || response.status === 429;
    if (!passing || attempt >= MAX_ATTEMPTS) throw new Error(`create through ${replica.identity} failed (attempt ${attempt}): ${status}`);
    const after = response instanceof Error ? 1 : Number(response.headers.get("retry-after") ?? "1");
    await pause((Number.isFinite(after) && after > 0 ? after : 1) * 1000);
  }
}

/**
 * `count` sessions, the i-th through replica i mod replicas, `width` creates in flight, and the
 * i-th begun no earlier than i / `perSecond` seconds after the first (a steady arrival rate
 * rather than one burst as fast as the machine answers).
 */
export async function createSessions(
  replicas: KwokReplica[],
  count: number,
  pace: { width: number; perSecond: number },
  onProgress: (done: number) => void,
): Promise<{ created: Created[]; refused: string[] }> {
  let done = 0;
  const start = performance.now();
  const refused: string[] = [];
  const results = await inBatches(Array.from({ length: count }), pace.width, async (_item, index) => {
    const due = start + (index * 1000) / pace.perSecond - performance.now();
    if (due > 0) await pause(due);
    const via = index % replicas.length;
    // A create refused for good is a figure of the run (and its reason kept), not its end.
    const created = await createOne(replicas[via]!, via).catch((error: Error) => void refused.push(error.message));
    done += 1;
    if (done % 500 === 0) onProgress(done);
    return created;
  });
  return { created: results.filter((result): result is Created => result !== undefined), refused };
}

/** Sessions a replica holds, by state, from its /metrics (`runner_sessions{mode,state}`). */
export async function sessionStates(replica: KwokReplica): Promise<Record<string, number>> {
  const text = await replica.metrics();
  const lines = text.split("\n").filter((line) => line.startsWith("runner_sessions{"));
  const states: Record<string, number> = {};
  for (const sample of parseExposition(lines.join("\n"))) states[sample.labels.state ?? "?"] = (states[sample.labels.state ?? "?"] ?? 0) + sample.value;
  return states;
}

const total = (states: Record<string, number>) => Object.values(states).reduce((sum, n) => sum + n, 0);

/**
 * Polls until each of the `count` sessions has either reached running or failed (a failure is a
 * figure of the run, not the end of it), or fails after `timeoutMs`. Answers each replica's
 * states at that moment.
 */
export async function waitAllStarted(replicas: KwokReplica[], count: number, timeoutMs: number, onProgress: (running: number, failed: number) => void): Promise<Record<string, number>[]> {
  const deadline = Date.now() + timeoutMs;
  let reported = "";
  for (;;) {
    const states = await Promise.all(replicas.map(sessionStates));
    const running = states.reduce((sum, s) => sum + (s.running ?? 0), 0);
    const failed = states.reduce((sum, s) => sum + (s.failed ?? 0), 0);
    if (running + failed >= count) return states;
    if (Date.now() > deadline) throw new Error(`timed out with ${running} of ${count} sessions running: ${JSON.stringify(states)}`);
    if (`${running}/${failed}` !== reported) {
      reported = `${running}/${failed}`;
      onProgress(running, failed);
    }
    await pause(2000);
  }
}

/** Deletes every session through the replica that created it; answers how many were refused. */
export async function deleteSessions(replicas: KwokReplica[], sessions: Created[], width: number): Promise<number> {
  let refused = 0;
  await inBatches(sessions, width, async ({ sessionId, via }) => {
    const response = await fetch(`${replicas[via]!.baseUrl}/v1/sessions/${sessionId}`, { method: "DELETE" }).catch(() => undefined);
    if (!response || (response.status !== 204 && response.status !== 200 && response.status !== 404)) refused += 1;
    await response?.body?.cancel();
  });
  return refused;
}

/** Sessions a replica holds in any state. */
export async function ownedBy(replica: KwokReplica): Promise<number> {
  return total(await sessionStates(replica));
}
