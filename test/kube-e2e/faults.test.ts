/**
 * The Kubernetes backend under faults injected into the simulated cluster . Simulator-only: every test here needs its fault knobs or counters; the runner's
 * processes killed under live sessions are in restarts.test.ts, which runs on both clusters.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { CREATE_ATTEMPTS } from "../../src/kube/retry/create-retry.ts";
import { waitFor } from "../support/wait.ts";
import { type KubeRunner, SESSION_NAMESPACE, startKubeRunner } from "../support/kube-runner.ts";
import { sessionBody } from "../support/session-body.ts";
import { eventsOf, eventsUntil, framesToClose, framesUntilText, isStatus, textOf } from "../support/streams.ts";

describe("faults", () => {
  let runner: KubeRunner;
  beforeAll(async () => {
    runner = await startKubeRunner();
  });
  afterAll(async () => {
    // No test may leave a pod behind.
    expect(await runner.sessionPods()).toEqual([]);
    await runner?.close();
  });

  const running = async () => {
    const { sessionId } = await runner.client.createSession(sessionBody());
    await eventsUntil(runner.client, sessionId, isStatus("running"));
    return sessionId;
  };
  const stopAndWaitGone = async (sessionId: string) => {
    await runner.client.deleteSession(sessionId);
    await waitFor("the pod to be gone", async () => !(await runner.sessionPods()).includes(`telo-run-${sessionId}`) || undefined);
  };

  it("keeps following pods after every watch is dropped", async () => {
    const sessionId = await running();
    expect(runner.sim.faults.dropWatches("pods")).toBeGreaterThanOrEqual(1);
    runner.sim.faults.exitPod(SESSION_NAMESPACE, `telo-run-${sessionId}`, { exitCode: 0 });
    expect(eventsOf(await eventsUntil(runner.client, sessionId)).at(-1)).toEqual({ type: "status", status: { kind: "exited", code: 0 } });
    await stopAndWaitGone(sessionId);
  });

  it("relists after a forced 410 and still sees the pod end", async () => {
    const sessionId = await running();
    runner.sim.faults.expireResourceVersions();
    runner.sim.faults.dropWatches("pods");
    runner.sim.faults.exitPod(SESSION_NAMESPACE, `telo-run-${sessionId}`, { exitCode: 0 });
    expect(eventsOf(await eventsUntil(runner.client, sessionId)).at(-1)).toEqual({ type: "status", status: { kind: "exited", code: 0 } });
    await stopAndWaitGone(sessionId);
  });

  it("fails the start, summarised, when the API answers 500 to every attempt of the pod create", async () => {
    // As many failures as the bounded retries try: the create gives up.
    runner.sim.faults.failNext({ verb: "create", resource: "pods", code: 500, count: CREATE_ATTEMPTS });
    const { sessionId } = await runner.client.createSession(sessionBody());
    const end = eventsOf(await eventsUntil(runner.client, sessionId)).at(-1);
    expect(end).toEqual({
      type: "status",
      status: { kind: "failed", message: expect.stringMatching(/^create: could not create the session pod: the Kubernetes API rejected the request \((\w+, )?HTTP 500\)$/) },
    });
  });

  it("retries a pod create the API answers with 429 or 500, and the session runs", async () => {
    runner.sim.faults.failNext({ verb: "create", resource: "pods", code: 429 });
    runner.sim.faults.failNext({ verb: "create", resource: "pods", code: 503 });
    const sessionId = await running();
    expect(await runner.sessionPods()).toContain(`telo-run-${sessionId}`);
    await stopAndWaitGone(sessionId);
  });

  it("retries a pod create whose answer was lost (the pod was created), and the session runs on that one pod", async () => {
    runner.sim.faults.loseAnswers({ verb: "create", resource: "pods" });
    const sessionId = await running();
    expect((await runner.sessionPods()).filter((name) => name.startsWith(`telo-run-${sessionId}`))).toEqual([`telo-run-${sessionId}`]);
    await stopAndWaitGone(sessionId);
  });

  it("deletes the pod a failed start's lost create made, so nothing is left running", async () => {
    // The first create makes the pod but its answer is lost; the retry is refused for good.
    runner.sim.faults.loseAnswers({ verb: "create", resource: "pods" });
    runner.sim.faults.failNext({ verb: "create", resource: "pods", code: 403 });
    const { sessionId } = await runner.client.createSession(sessionBody());
    const end = eventsOf(await eventsUntil(runner.client, sessionId)).at(-1);
    expect(end).toMatchObject({ type: "status", status: { kind: "failed" } });
    await waitFor("the pod to be gone", async () => !(await runner.sessionPods()).includes(`telo-run-${sessionId}`) || undefined);
  });

  it("re-attaches the terminal when the attach stream is cut", async () => {
    const sessionId = await running();
    const terminal = runner.client.terminal(sessionId);
    await terminal.send("before\r");
    await framesUntilText(terminal, "before");
    expect(runner.sim.faults.cutAttachStreams({ pod: `telo-run-${sessionId}` })).toBe(1);
    // Keep typing until the re-attached stream echoes (stdin sent while detached is lost).
    const echoed = (async () => textOf(await framesUntilText(terminal, "after")))();
    const typing = setInterval(() => void terminal.send("after\r"), 300);
    try {
      expect(await echoed).toContain("after");
    } finally {
      clearInterval(typing);
    }
    terminal.close();
    await stopAndWaitGone(sessionId);
  });

  // As a restarted apiserver does before its authorizer has synced (the tier's
  // apiserver-restart.test.ts): the re-attach is refused 403 a few times, then served.
  it("re-attaches the terminal through 403s while the control plane restarts", async () => {
    const sessionId = await running();
    const terminal = runner.client.terminal(sessionId);
    await terminal.send("before\r");
    await framesUntilText(terminal, "before");
    runner.sim.faults.failNext({ resource: "pods", subresource: "attach", code: 403, count: 3 });
    expect(runner.sim.faults.cutAttachStreams({ pod: `telo-run-${sessionId}` })).toBe(1);
    // Keep typing until the re-attached stream echoes (stdin sent before the runner sees the cut is lost).
    const echoed = (async () => textOf(await framesUntilText(terminal, "after")))();
    const typing = setInterval(() => void terminal.send("after\r"), 300);
    try {
      const text = await echoed;
      expect(text).toContain("after");
      expect(text).not.toContain("failed to attach");
    } finally {
      clearInterval(typing);
    }
    terminal.close();
    await stopAndWaitGone(sessionId);
  });

  it("says why on the terminal when a re-attach is refused for good", async () => {
    const sessionId = await running();
    const terminal = runner.client.terminal(sessionId);
    await terminal.send("before\r");
    await framesUntilText(terminal, "before");
    runner.sim.faults.failNext({ resource: "pods", subresource: "attach", code: 404 });
    expect(runner.sim.faults.cutAttachStreams({ pod: `telo-run-${sessionId}` })).toBe(1);
    expect(textOf(await framesUntilText(terminal, "failed to attach"))).toContain(
      "[runner] failed to attach PTY: the Kubernetes API rejected the request (NotFound, HTTP 404)",
    );
    terminal.close();
    await stopAndWaitGone(sessionId);
  });

  // Found by the chaos run: one 503 on the delete of an ended session's pod left it
  // holding quota until the next supervisor's boot; it is retried until it goes.
  // Found by the warm-pool tests: an app that ended while the first attach was still reading the
  // log for what it printed before the attach had its output shown twice, once by that read and
  // once by the end's backfill of a terminal that seemed to have shown nothing.
  it("shows an app's output once when it ends while the log is read after the first attach", async () => {
    runner.sim.faults.addLatency({ verb: "get", resource: "pods", subresource: "log", ms: 1500 });
    try {
      const { sessionId } = await runner.client.createSession(sessionBody({ simulate: { output: "printed once\r\n", "run-ms": 300 } }));
      expect(eventsOf(await eventsUntil(runner.client, sessionId)).at(-1)).toEqual({ type: "status", status: { kind: "exited", code: 0 } });
      const shown = textOf(await framesToClose(runner.client.terminal(sessionId)));
      expect(shown.split("printed once").length - 1).toBe(1);
    } finally {
      runner.sim.faults.clear();
    }
  });

  it("deletes an ended session's pod even when the API refuses the first delete with 503", async () => {
    const sessionId = await running();
    runner.sim.faults.failNext({ verb: "delete", resource: "pods", code: 503, count: 2 });
    runner.sim.faults.exitPod(SESSION_NAMESPACE, `telo-run-${sessionId}`, { exitCode: 0 });
    expect(eventsOf(await eventsUntil(runner.client, sessionId)).at(-1)).toEqual({ type: "status", status: { kind: "exited", code: 0 } });
    await waitFor("the pod to be gone", async () => !(await runner.sessionPods()).includes(`telo-run-${sessionId}`) || undefined);
  });

  // Found by the chaos run: a pod that ended while no supervisor watched it (its
  // delete had failed, then the supervisor was killed) was re-adopted as a failed start and the
  // session stayed `starting`. Simulator-only: the pod must end exactly while the supervisor is down.
  it("ends a re-adopted session as its pod ended while the supervisor was down", async () => {
    const { sessionId } = await runner.client.createSession(sessionBody({ simulate: { output: "bye\n" } }));
    await eventsUntil(runner.client, sessionId, isStatus("running"));
    await runner.stopSupervisor("SIGKILL");
    runner.sim.faults.exitPod(SESSION_NAMESPACE, `telo-run-${sessionId}`, { exitCode: 3 });
    await waitFor("the pod to fail", async () => (await runner.core.readNamespacedPod({ name: `telo-run-${sessionId}`, namespace: SESSION_NAMESPACE })).status?.phase === "Failed" || undefined);
    await runner.startSupervisor();
    expect(eventsOf(await eventsUntil(runner.client, sessionId)).at(-1)).toEqual({
      type: "status",
      status: { kind: "failed", message: expect.stringMatching(/^container "session" failed: .*\(exit code 3\)/) },
    });
    await waitFor("the pod to be gone", async () => !(await runner.sessionPods()).includes(`telo-run-${sessionId}`) || undefined);
  });
  // As the real cluster's audit log caught it: a pod the watch saw deleted behind
  // the runner's back was deleted again (a 404). The only delete is the test's own.
  it("does not delete again a pod the watch saw deleted behind the runner's back", async () => {
    const { sessionId } = await runner.client.createSession(sessionBody({ simulate: { "image-pull": "fail" } }));
    await eventsUntil(runner.client, sessionId, (event) => event.type === "progress" && event.message === "Pulling image");
    const deletesBefore = runner.sim.counters().requests["delete pods"] ?? 0;
    await runner.core.deleteNamespacedPod({ name: `telo-run-${sessionId}`, namespace: SESSION_NAMESPACE, gracePeriodSeconds: 0 });
    expect(eventsOf(await eventsUntil(runner.client, sessionId)).at(-1)).toEqual({
      type: "status",
      status: { kind: "failed", message: "start: pod disappeared before reaching Running" },
    });
    expect(runner.sim.counters().requests["delete pods"]).toBe(deletesBefore + 1);
  });
});

describe("Kubernetes API cost", () => {
  let runner: KubeRunner;
  beforeAll(async () => {
    runner = await startKubeRunner({ env: { RUNNER_MAX_SESSIONS: "128" }, sim: { podStartDelayMs: 0 } });
  });
  afterAll(() => runner?.close());

  it("makes at most 6 API requests per session start in the plainest configuration", async () => {
    // One session first, so the cost measured is a session's and not the first connection's.
    const warm = await runner.client.createSession(sessionBody());
    await eventsUntil(runner.client, warm.sessionId, isStatus("running"));
    // The attach and the log read after it are the last calls of a start.
    await waitFor("the first attach", () => runner.sim.counters().attachSessions === 1 || undefined);
    // The log read that follows the attach ends that start.
    await waitFor("the first log read", () => runner.sim.counters().requests["get pods/log"] === 1 || undefined);
    runner.sim.resetCounters();
    const { sessionId } = await runner.client.createSession(sessionBody());
    await eventsUntil(runner.client, sessionId, isStatus("running"));
    await waitFor("the second attach", () => runner.sim.counters().attachSessions === 2 || undefined);
    // After the attach opens, the log is read once for what the app printed before it.
    await waitFor("the log read after the attach", () => runner.sim.counters().requests["get pods/log"] === 1 || undefined);
    const requests = runner.sim.counters().requests;
    const total = Object.values(requests).reduce((sum, count) => sum + count, 0);
    expect(requests).toEqual({ "create pods": 1, "get pods/attach": 1, "get pods/log": 1 });
    expect(total).toBeLessThanOrEqual(6);
    await Promise.all([warm.sessionId, sessionId].map((id) => runner.client.deleteSession(id)));
  });

  it("holds one pod watch in total with 100 live sessions", async () => {
    const ids = await Promise.all(Array.from({ length: 100 }, async () => (await runner.client.createSession(sessionBody())).sessionId));
    await Promise.all(ids.map((id) => eventsUntil(runner.client, id, isStatus("running"))));
    expect(runner.sim.counters().openWatches).toBe(1);
    await Promise.all(ids.map((id) => runner.client.deleteSession(id)));
    await waitFor("the pods to be gone", async () => (await runner.sessionPods()).length === 0 || undefined, 60_000);
  }, 180_000);
});
