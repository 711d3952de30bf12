/**
 * A terminal handed over twice in quick succession, as a rolling update moves a session on each
 * replica's replacement: its second owner shows first what was printed while no replica was
 * attached, read back from the log, and its own handover must find where it stopped by reading
 * the log back from when that output was printed, not from when it was shown (it was shown
 * seconds later). The backend in-process against the simulated cluster; real sockets throughout.
 */
import { CoreV1Api } from "@kubernetes/client-node";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { STREAMS_ANNOTATION } from "../../../src/kube/session/stream-marks-calls.ts";
import { ADOPTION_CEILING, type InProcessBackend, SESSION_NAMESPACE, recorder, runSpec, startInProcessBackend } from "../../support/in-process-backend.ts";
import { ticksOf } from "../../support/ticking-terminal.ts";
import { waitFor } from "../../support/wait.ts";

/** Longer than the margin a read back from the log allows for clocks apart (5 s). */
const NO_OWNER_MS = 7_000;
const IDS = { events: 1, apps: { app: 1 } };

describe("a terminal handed over again soon after its adoption", () => {
  let harness: InProcessBackend;
  beforeAll(async () => {
    harness = await startInProcessBackend();
  });
  afterAll(() => harness?.close());

  const savedStart = async (sessionId: string) => {
    const core = harness.sim.kubeConfig().makeApiClient(CoreV1Api);
    const pod = await core.readNamespacedPod({ name: `telo-run-${sessionId}`, namespace: SESSION_NAMESPACE });
    return JSON.parse(pod.metadata?.annotations?.[STREAMS_ANNOTATION] ?? "{}").apps?.app?.start;
  };

  it("saves where it stopped although what it showed first was printed long before", async () => {
    const sessionId = "handedtwicex";
    const first = recorder();
    const { workload } = await harness.backend.start(runSpec(sessionId, { "tick-ms": "100" }), first.callbacks);
    await waitFor("the first owner showing output", () => ticksOf(first.text()).length >= 3 || undefined);
    await workload.handOver!(IDS);
    const firstShown = ticksOf(first.text()).at(-1)!;
    expect(await savedStart(sessionId)).toMatchObject({ from: "position" });

    await new Promise((resolve) => setTimeout(resolve, NO_OWNER_MS));
    const adoptable = (await harness.backend.adoptSessions!(ADOPTION_CEILING, () => true)).find((candidate) => candidate.spec.sessionId === sessionId);
    const second = recorder();
    const resumed = await adoptable!.resume(second.callbacks);
    // What was printed while nobody was attached, then live output.
    await waitFor("the successor showing the lines printed meanwhile", () => ticksOf(second.text()).length > NO_OWNER_MS / 100 || undefined);
    expect(ticksOf(second.text())[0]).toBe(firstShown + 1);
    await resumed.workload.handOver!(IDS);

    expect(await savedStart(sessionId)).toMatchObject({ from: "position" });
    const third = recorder();
    const again = (await harness.backend.adoptSessions!(ADOPTION_CEILING, () => true)).find((candidate) => candidate.spec.sessionId === sessionId);
    const last = await again!.resume(third.callbacks);
    await waitFor("the third owner showing output", () => ticksOf(third.text()).length > 0 || undefined);
    expect(ticksOf(third.text())[0]).toBe(ticksOf(second.text()).at(-1)! + 1);
    await last.workload.stop();
    await last.workload.done;
  }, 30_000);
});
