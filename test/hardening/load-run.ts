/**
 * The load run (issue 11): many concurrent session creations through both processes on the
 * simulated cluster, past the registry's capacity. Every answer is a 201 or the documented
 * `409 too_many_sessions`, exactly `capacity` sessions are admitted, each runs while its own event
 * stream follows it, the runner holds one pod watch for all of them, every stop ends its session
 * and its pod, and the freed capacity admits again. States and counts only: a loaded machine
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
    expect(admitted.length).toBe(capacity);
    expect(new Set(refused.map((answer) => JSON.stringify(answer)))).toEqual(
      new Set([JSON.stringify({ status: 409, body: { error: "too_many_sessions", message: `runner is at its configured max of ${capacity} concurrent sessions` } })]),
    );

    await Promise.all(admitted.map((id) => eventsUntil(runner.client, id, isStatus("running"))));
    expect(runner.sim.counters().openWatches).toBe(1);

    await Promise.all(admitted.map((id) => runner.client.deleteSession(id)));
    const ends = await Promise.all(admitted.map(async (id) => eventsOf(await eventsUntil(runner.client, id)).at(-1)));
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
