/**
 * The load run (docs/testing.md "The chaos and load runs"): many concurrent session creations through both processes on the
 * simulated cluster, past the registry's capacity. Every answer is a 201 or the documented
 * `409 too_many_sessions`; the registry admits `capacity` sessions plus one for each that ended
 * (a start the loaded apiserver failed) and was evicted to make room; each runs (or failed to
 * start, saying where) while its own event stream follows it, the runner holds one pod watch for
 * all of them, every stop ends its session and its pod, and the freed capacity admits again. States and counts only: a loaded machine
 * only takes longer. `load.test.ts` (npm test) and `load.soak.ts` (test:soak) run it at two sizes.
 */
import { expect } from "vitest";
import { startKubeRunner } from "../support/kube-runner.ts";
import { sessionBody } from "../support/session-body.ts";
import { eventsOf, eventsUntil, isStatus } from "../support/streams.ts";
import { waitFor } from "../support/wait.ts";

export type LoadRun = { creates: number; capacity: number };

export async function runLoad({ creates, capacity }: LoadRun): Promise<void> {
  const runner = await startKubeRunner({ env: { RUNNER_MAX_SESSIONS: String(capacity) }, sim: { podStartDelayMs: 0 } });
  try {
    const answers = await Promise.all(
      Array.from({ length: creates }, () =>
        runner.client.createSession(sessionBody()).then(
          ({ sessionId }) => ({ sessionId }),
          (error: { status?: number; body?: unknown }) => ({ status: error.status, body: error.body }),
        ),
      ),
    );
    const admitted = answers.flatMap((answer) => ("sessionId" in answer ? [answer.sessionId] : []));
    const refused = answers.filter((answer) => !("sessionId" in answer));
    expect(new Set(refused.map((answer) => JSON.stringify(answer)))).toEqual(
      new Set([JSON.stringify({ status: 409, body: { error: "too_many_sessions", message: `runner is at its configured max of ${capacity} concurrent sessions` } })]),
    );

    // Each admitted session followed by its own event stream until it runs or ends. One that
    // ended during the burst (a start the loaded apiserver refused or outwaited) was reclaimable,
    // so a later creation evicted it: every admission past the capacity evicted exactly one.
    const outcomes = await Promise.all(
      admitted.map(async (id) => {
        const items = await eventsUntil(runner.client, id, (event) => event.type === "status" && event.status.kind !== "starting").catch((error: { status?: number }) => {
          if (error.status === 404) return "evicted" as const;
          throw error;
        });
        if (items === "evicted") return items;
        const end = eventsOf(items).at(-1);
        return end?.type === "status" ? (end.status.kind === "failed" ? `failed: ${end.status.message}` : end.status.kind) : "no status";
      }),
    );
    const tally = new Map<string, number>();
    for (const outcome of outcomes) tally.set(outcome, (tally.get(outcome) ?? 0) + 1);
    const evicted = tally.get("evicted") ?? 0;
    expect({ admittedPastCapacity: admitted.length - capacity, tally: Object.fromEntries(tally) }).toEqual({
      admittedPastCapacity: evicted,
      tally: expect.objectContaining({ running: expect.any(Number) }),
    });
    for (const outcome of tally.keys()) expect(outcome).toMatch(/^(running|evicted|failed: (create|start): )/);
    expect(runner.sim.counters().openWatches).toBe(1);

    const live = admitted.filter((_, index) => outcomes[index] === "running");
    await Promise.all(live.map((id) => runner.client.deleteSession(id)));
    const ends = await Promise.all(live.map(async (id) => eventsOf(await eventsUntil(runner.client, id)).at(-1)));
    expect(new Set(ends.map((end) => JSON.stringify(end)))).toEqual(new Set([JSON.stringify({ type: "status", status: { kind: "stopped" } })]));
    await waitFor("every session pod to be gone", async () => (await runner.sessionPods()).length === 0 || undefined, 120_000);

    // Ended sessions are reclaimable: the full registry admits again.
    const again = await runner.client.createSession(sessionBody());
    await eventsUntil(runner.client, again.sessionId, isStatus("running"));
    await runner.client.deleteSession(again.sessionId);
    await waitFor("its pod to be gone", async () => (await runner.sessionPods()).length === 0 || undefined, 60_000);
  } finally {
    await runner.close();
  }
}
