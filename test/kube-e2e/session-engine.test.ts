/**
 * The session engine's pod-lifecycle guarantees through both processes and the simulated
 * cluster (docs/kubernetes.md "The engine"): what a pod prints before its terminal is
 * attached, the terminal's size, one delete per stop, no re-attach to an ended container, and
 * the end of a run its kernel holds open for the debugger (more in run-ends.test.ts).
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { waitFor } from "../support/wait.ts";
import { type KubeRunner, startKubeRunner } from "../support/kube-runner.ts";
import { sessionBody } from "../support/session-body.ts";
import { eventsOf, eventsUntil, framesToClose, framesUntilText, isStatus, textOf } from "../support/streams.ts";

const occurrences = (text: string, marker: string) => text.split(marker).length - 1;

describe("the session engine on the simulated cluster", () => {
  let runner: KubeRunner;
  beforeAll(async () => {
    runner = await startKubeRunner();
  });
  afterAll(async () => {
    await waitFor("every pod to be gone", async () => (await runner.sessionPods()).length === 0 || undefined);
    await runner?.close();
  });

  const stop = async (sessionId: string) => {
    await runner.client.deleteSession(sessionId);
    await waitFor("the pod to be gone", async () => !(await runner.sessionPods()).includes(`telo-run-${sessionId}`) || undefined);
  };

  it("shows what the app printed before its terminal was attached, once", async () => {
    const { sessionId } = await runner.client.createSession(sessionBody({ simulate: { output: "kernel booted\n" } }));
    await eventsUntil(runner.client, sessionId, isStatus("running"));
    const terminal = runner.client.terminal(sessionId);
    await terminal.send("typed later\r");
    // The echo comes after the boot line on the same stream: a repeat would be in by then.
    const text = textOf(await framesUntilText(terminal, "typed later"));
    expect(occurrences(text, "kernel booted")).toBe(1);
    expect(text.indexOf("kernel booted")).toBeLessThan(text.indexOf("typed later"));
    terminal.close();
    await stop(sessionId);
  });

  it("shows every line once and in order when the runtime delivers to the attach only a moment after it opens", async () => {
    // Lines printed in that moment are in the log only, and the log may be read before them.
    const { sessionId } = await runner.client.createSession(sessionBody({ simulate: { "tick-ms": 20, "attach-delay-ms": 250 } }));
    await eventsUntil(runner.client, sessionId, isStatus("running"));
    const terminal = runner.client.terminal(sessionId);
    const ticks = [...textOf(await framesUntilText(terminal, "tick 40\r\n")).matchAll(/tick (\d+)\r\n/g)].map((match) => Number(match[1]));
    expect(ticks.slice(0, 40)).toEqual(Array.from({ length: 40 }, (_, index) => index + 1));
    terminal.close();
    await stop(sessionId);
  });

  it("gives the terminal a size on attach, before the client sends one", async () => {
    const { sessionId } = await runner.client.createSession(sessionBody({ simulate: { "report-resize": true } }));
    await eventsUntil(runner.client, sessionId, isStatus("running"));
    const terminal = runner.client.terminal(sessionId);
    expect(textOf(await framesUntilText(terminal, "resized to 80x24"))).toContain("[sim] terminal resized to 80x24");
    terminal.close();
    await stop(sessionId);
  });

  it("deletes the pod once per stop", async () => {
    const { sessionId } = await runner.client.createSession(sessionBody());
    await eventsUntil(runner.client, sessionId, isStatus("running"));
    const before = runner.sim.counters().requests["delete pods"] ?? 0;
    await stop(sessionId);
    expect(eventsOf(await eventsUntil(runner.client, sessionId)).at(-1)).toEqual({ type: "status", status: { kind: "stopped" } });
    expect((runner.sim.counters().requests["delete pods"] ?? 0) - before).toBe(1);
  });

  it("after a normal exit, says nothing about attaching to the ended container", async () => {
    const { sessionId } = await runner.client.createSession(sessionBody({ simulate: { output: "all done\n", "exit-code": 0, "run-ms": 400 } }));
    await eventsUntil(runner.client, sessionId, isStatus("running"));
    const terminal = runner.client.terminal(sessionId);
    const text = textOf(await framesToClose(terminal));
    expect(text).toContain("all done");
    expect(text).not.toContain("failed to attach");
    expect(eventsOf(await eventsUntil(runner.client, sessionId)).at(-1)).toEqual({ type: "status", status: { kind: "exited", code: 0 } });
  });

  it("does not take the kernel's held-open notice, printed before the app starts, as the run's end", async () => {
    const { sessionId } = await runner.client.createSession(sessionBody({}, { inspect: true }));
    // The kernel prints the notice first, then starts the app: both are on hand now.
    const terminal = runner.client.terminal(sessionId);
    expect(textOf(await framesUntilText(terminal, "holding the application open"))).toContain("holding the application open");
    const started = (event: { type: string; phase?: string }) => event.type === "run" && event.phase === "started";
    await eventsUntil(runner.client, sessionId, started);
    // The app still runs (it echoes), and no run ended: only the pod's end (or a Kernel.Stopped) says so.
    await terminal.send("still here\r");
    expect(textOf(await framesUntilText(terminal, "still here"))).toContain("still here");
    terminal.close();
    const events = eventsOf(await eventsUntil(runner.client, sessionId, started));
    expect(events.filter((event) => event.type === "run").map((event) => event.type === "run" && event.phase)).toEqual(["started"]);
    expect((await runner.client.getSession(sessionId)).status.kind).toBe("running");
    await stop(sessionId);
  });

  it("ends an inspect run when its pod ends, not before (the kernel says nothing of it)", async () => {
    const { sessionId } = await runner.client.createSession(sessionBody({ simulate: { "exit-code": 0, "run-ms": 300 } }, { inspect: true }));
    const events = eventsOf(await eventsUntil(runner.client, sessionId));
    expect(events.filter((event) => event.type === "run").map((event) => event.type === "run" && event.phase)).toEqual(["started", "completed"]);
    expect(events.at(-1)).toEqual({ type: "status", status: { kind: "exited", code: 0 } });
  });
});

describe("a predefined-app session through the same engine", () => {
  let runner: KubeRunner;
  beforeAll(async () => {
    runner = await startKubeRunner({ env: { RUNNER_APPS: JSON.stringify({ notebook: { image: "acme/notebook:1", port: 8888 } }) } });
  });
  afterAll(async () => {
    await waitFor("every pod to be gone", async () => (await runner.sessionPods()).length === 0 || undefined);
    await runner?.close();
  });

  it("runs the catalog image, attaches its terminal, and deletes its pod on stop", async () => {
    const { sessionId } = await runner.client.createAppSession("notebook");
    const untilRunning = eventsOf(await eventsUntil(runner.client, sessionId, isStatus("running")));
    expect(untilRunning.at(-1)).toMatchObject({ type: "status", status: { kind: "running" } });
    const pod = await runner.core.readNamespacedPod({ namespace: "telo-sessions", name: `telo-run-${sessionId}` });
    expect(pod.spec?.initContainers).toBeUndefined();
    expect(pod.spec?.containers.map((container) => container.image)).toEqual(["acme/notebook:1"]);
    const terminal = runner.client.terminal(sessionId);
    await terminal.send("hello app\r");
    expect(textOf(await framesUntilText(terminal, "hello app"))).toContain("hello app");
    terminal.close();
    await runner.client.deleteSession(sessionId);
    expect(eventsOf(await eventsUntil(runner.client, sessionId)).at(-1)).toEqual({ type: "status", status: { kind: "stopped" } });
    await waitFor("the pod to be gone", async () => !(await runner.sessionPods()).includes(`telo-run-${sessionId}`) || undefined);
  });
});
