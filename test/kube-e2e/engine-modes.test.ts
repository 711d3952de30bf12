/**
 * Run, app and watch sessions are one engine with three descriptions: the same start
 * deadline (RUNNER_START_DEADLINE_SECONDS, which watch pods once did not follow), the same stop
 * during a slow start, one delete per stop and the pod gone after it. Each guarantee is driven
 * through both processes for every mode, on a simulated cluster whose kubelet keeps every
 * container (init containers first) creating for an hour, so no session ever serves.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { RunnerClient } from "../../src/client/index.ts";
import { type KubeRunner, startKubeRunner } from "../support/kube-runner.ts";
import { sessionBody } from "../support/session-body.ts";
import { eventsOf, eventsUntil } from "../support/streams.ts";
import { waitFor } from "../support/wait.ts";

const WEB = "web/telo.yaml";

type Mode = "run" | "app" | "watch";
const MODES: Mode[] = ["run", "app", "watch"];

function create(client: RunnerClient, mode: Mode): Promise<{ sessionId: string }> {
  if (mode === "app") return client.createAppSession("notebook");
  if (mode === "run") return client.createSession(sessionBody());
  return client.createSession(
    sessionBody(
      {},
      {
        mode: "watch",
        apps: [{ name: "web", entryRelativePath: WEB, ports: [], io: "tty" }],
        bundle: { entryRelativePath: WEB, files: [{ relativePath: WEB, contents: "kind: Telo.Application\n" }] },
      },
    ),
  );
}

/** The session's pods: `telo-run-<id>` for run and app sessions, `telo-watch-<id>-<suffix>` for watch ones. */
async function podsOf(runner: KubeRunner, sessionId: string): Promise<string[]> {
  return (await runner.sessionPods()).filter((name) => name === `telo-run-${sessionId}` || name.startsWith(`telo-watch-${sessionId}-`));
}

function engineRunner(env: Record<string, string>): Promise<KubeRunner> {
  return startKubeRunner({
    env: { RUNNER_WATCH_SESSIONS: "true", RUNNER_APPS: JSON.stringify({ notebook: { image: "acme/notebook:1", port: 8888 } }), ...env },
    sim: { podStartDelayMs: 3_600_000 },
  });
}

describe("one start deadline for every mode", () => {
  let runner: KubeRunner;
  beforeAll(async () => {
    runner = await engineRunner({ RUNNER_START_DEADLINE_SECONDS: "1" });
  });
  afterAll(async () => {
    await runner?.close();
  });

  it.each(MODES)("%s: fails at RUNNER_START_DEADLINE_SECONDS naming what the pod waits on, and deletes the pod", async (mode) => {
    const { sessionId } = await create(runner.client, mode);
    const end = eventsOf(await eventsUntil(runner.client, sessionId)).at(-1);
    expect(end).toEqual({
      type: "status",
      status: { kind: "failed", message: expect.stringMatching(/^start: pod did not reach Running within the start deadline \((init )?container "[\w-]+" waiting: (ContainerCreating|PodInitializing)\)$/) },
    });
    await waitFor("the pod to be gone", async () => (await podsOf(runner, sessionId)).length === 0 || undefined);
  });
});

describe("one stop for every mode", () => {
  let runner: KubeRunner;
  beforeAll(async () => {
    runner = await engineRunner({});
  });
  afterAll(async () => {
    await runner?.close();
  });

  it.each(MODES)("%s: a DELETE during a slow start stops it at once with one pod delete, and the pod goes", async (mode) => {
    const { sessionId } = await create(runner.client, mode);
    await waitFor("the session's pod", async () => (await podsOf(runner, sessionId)).length === 1 || undefined);
    const before = runner.sim.counters().requests["delete pods"] ?? 0;
    await runner.client.deleteSession(sessionId);
    expect(eventsOf(await eventsUntil(runner.client, sessionId)).at(-1)).toEqual({ type: "status", status: { kind: "stopped" } });
    await waitFor("the pod to be gone", async () => (await podsOf(runner, sessionId)).length === 0 || undefined);
    expect((runner.sim.counters().requests["delete pods"] ?? 0) - before).toBe(1);
  });
});
