/**
 * A run session's run ends when its pod does, as docs/kubernetes.md "A run held open for the debugger"
 * says: the kernel reports no `Kernel.Stopped` when a run under `--inspect` ends, so the runner
 * closes the run from the pod's end, before the status that ends the stream, and puts the end
 * on the session's timeline. Runs on the simulated cluster in `npm test` and on the real
 * one (the kernel stand-in) in `npm run test:cluster`.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { RunEvent } from "../../src/contract/wire.ts";
import { waitFor } from "../support/wait.ts";
import { type ClusterRunner, ON_REAL_CLUSTER, kubeSessionBody, startClusterRunner } from "../support/kube-runner.ts";
import { eventsOf, eventsUntil } from "../support/streams.ts";

const runsOf = (events: RunEvent[]) => events.filter((event) => event.type === "run");
const ends = (event: RunEvent) => event.type === "run" || (event.type === "status" && event.status.kind !== "starting");

describe(`run ends on the ${ON_REAL_CLUSTER ? "real" : "simulated"} cluster`, () => {
  let runner: ClusterRunner;
  beforeAll(async () => {
    runner = await startClusterRunner();
  });
  afterAll(async () => {
    await waitFor("every pod to be gone", async () => (await runner.sessionPods()).length === 0 || undefined, 60_000);
    await runner?.close();
  });

  it.each([
    [0, { kind: "exited", code: 0 }],
    [3, { kind: "failed", message: expect.stringMatching(/^container "session" failed: Error \(exit code 3\)/) }],
  ])("ends an inspect run that exits %i as completed with its code, before the session's end", async (code, status) => {
    const { sessionId } = await runner.client.createSession(kubeSessionBody({ "exit-code": code, "run-ms": 1500 }, { inspect: true }));
    const events = eventsOf(await eventsUntil(runner.client, sessionId)).filter(ends);
    expect(runsOf(events).map((event) => event.type === "run" && event.phase)).toEqual(["started", "completed"]);
    expect(events.at(-2)).toMatchObject({ type: "run", app: "app", generation: 1, phase: "completed", code, durationMs: expect.any(Number) });
    expect(events.at(-1)).toMatchObject({ type: "status", status });
    const { timeline } = await runner.client.getSession(sessionId);
    expect(timeline).toContainEqual(expect.objectContaining({ stage: "completed", detail: expect.stringMatching(new RegExp(`^app run 1 completed with code ${code} after \\d+ ms$`)) }));
  });

  it("ends an inspect run that a stop ends as failed, saying so", async () => {
    const { sessionId } = await runner.client.createSession(kubeSessionBody({}, { inspect: true }));
    await eventsUntil(runner.client, sessionId, (event) => event.type === "run" && event.phase === "started");
    await runner.client.deleteSession(sessionId);
    const events = eventsOf(await eventsUntil(runner.client, sessionId)).filter(ends);
    expect(events.slice(-2)).toEqual([
      { type: "run", app: "app", generation: 1, phase: "failed", reason: "the session was stopped" },
      { type: "status", status: { kind: "stopped" } },
    ]);
    expect((await runner.client.getSession(sessionId)).timeline.at(-1)).toMatchObject({ stage: "failed", detail: "app run 1 failed: the session was stopped" });
  });

  it("fails a manifest with its count and its cause first, on the stream and on the timeline", async () => {
    // As the Telo CLI prints a load failure: a line per diagnostic, the count last.
    const echoes = Array.from({ length: 12 }, (_, index) => `telo.yaml:${index * 6 + 10}:3  warning  Resource 'Todo.Handler${index}' is not used.  UNUSED_RESOURCE\n`);
    const output = `${echoes.join("")}telo.yaml:4:12  error  Reference 'Http.Api.todos' does not resolve.  UNRESOLVED_REFERENCE\n\n1 error, 12 warnings\n`;
    const { sessionId } = await runner.client.createSession(kubeSessionBody({ output, "exit-code": 1, "run-ms": 1500 }, { inspect: true }));
    const end = eventsOf(await eventsUntil(runner.client, sessionId)).at(-1);
    const message = end?.type === "status" && end.status.kind === "failed" ? end.status.message : "";
    const lines = message.split("\n");
    expect(lines.slice(0, 2)).toEqual([
      'container "session" failed: Error (exit code 1): 1 error, 12 warnings',
      "telo.yaml:4:12  error  Reference 'Http.Api.todos' does not resolve.  UNRESOLVED_REFERENCE",
    ]);
    // The warnings once, after the errors (and after what a kernel printed before its diagnostics).
    expect(lines.filter((line) => line.includes("  warning  "))).toEqual(["telo.yaml:10:3  warning  Resource 'Todo.Handler0' is not used.  UNUSED_RESOURCE (and 11 more like it)"]);
    const { timeline } = await runner.client.getSession(sessionId);
    expect(timeline.at(-1)).toEqual({ stage: "failed", at: expect.any(String), detail: message.slice(0, 500) });
    expect(timeline.at(-2)).toMatchObject({ stage: "completed", detail: expect.stringMatching(/^app run 1 completed with code 1 /) });
  });

  it("has no run events without inspect (no debug stream), and its end on the timeline", async () => {
    const { sessionId } = await runner.client.createSession(kubeSessionBody({ "exit-code": 0, "run-ms": 300 }));
    const events = eventsOf(await eventsUntil(runner.client, sessionId));
    expect(runsOf(events)).toEqual([]);
    const document = await runner.client.getSession(sessionId);
    expect(document.apps[0]?.generation).toBe(0);
    expect(document.timeline.at(-1)).toMatchObject({ stage: "completed", detail: "the app exited with code 0" });
  });
});
