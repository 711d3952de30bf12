/**
 * A session's timeline in its document (docs/api.md "The timeline"), through both processes and
 * the simulated cluster: the start's stages from the pod's status and the runner's own, a
 * failure's cause, a run's end, and what a restarted supervisor rebuilds from the pod.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { TimelineEntry } from "../../src/contract/wire.ts";
import { LABEL } from "../../src/kube/specs/names.ts";
import { scrape, valueOf } from "../support/metrics.ts";
import { waitFor } from "../support/wait.ts";
import { type ClusterRunner, SESSION_NAMESPACE, kubeSessionBody, startClusterRunner } from "../support/kube-runner.ts";
import { eventsUntil } from "../support/streams.ts";

const stagesOf = (timeline: TimelineEntry[]) => timeline.map((entry) => entry.stage);
const times = (timeline: TimelineEntry[]) => timeline.map((entry) => Date.parse(entry.at));

describe("the session timeline on the simulated cluster", () => {
  let runner: ClusterRunner;
  beforeAll(async () => {
    runner = await startClusterRunner({ env: { RUNNER_START_DEADLINE_SECONDS: "2" } });
  });
  afterAll(async () => {
    await waitFor("every pod to be gone", async () => (await runner.sessionPods()).length === 0 || undefined, 30_000);
    await runner?.close();
  });

  it("dates every stage of a cold start, in order, from admission to the first output", async () => {
    const { sessionId, createdAt } = await runner.client.createSession(kubeSessionBody({ output: "hello\n", "run-ms": 300 }));
    await eventsUntil(runner.client, sessionId);
    const { timeline } = await runner.client.getSession(sessionId);
    expect(timeline[0]).toEqual({ stage: "admitted", at: createdAt });
    for (const stage of ["scheduled", "bundle-delivered", "image-pulled", "container-started", "running", "kernel-running"]) {
      expect(stagesOf(timeline)).toContain(stage);
    }
    expect(timeline.find((entry) => entry.stage === "kernel-running")?.detail).toBe("first output");
    // In order of occurrence, each start stage once.
    expect(times(timeline)).toEqual([...times(timeline)].sort((a, b) => a - b));
    expect(new Set(stagesOf(timeline)).size).toBe(timeline.length);
    expect(stagesOf(timeline).indexOf("bundle-delivered")).toBeLessThan(stagesOf(timeline).indexOf("container-started"));
  });

  it("says why a start failed, and counts it by the step it did not get through", async () => {
    const { sessionId } = await runner.client.createSession(kubeSessionBody({ "image-pull": "fail" }));
    await eventsUntil(runner.client, sessionId);
    const { timeline } = await runner.client.getSession(sessionId);
    const failed = timeline.at(-1)!;
    expect(failed.stage).toBe("failed");
    expect(failed.detail).toMatch(/^start: pod did not reach Running within the start deadline .*(ErrImagePull|ImagePullBackOff)/);
    expect(stagesOf(timeline)).not.toContain("container-started");
    const samples = await scrape(runner.baseUrl);
    expect(valueOf(samples, "runner_session_start_failures_total", { process: "supervisor", mode: "run", reason: "delivery" })).toBe(1);
  });

  it("dates the kernel's start by its own frame under inspect", async () => {
    const { sessionId } = await runner.client.createSession(kubeSessionBody({ "run-ms": 300 }, { inspect: true }));
    await eventsUntil(runner.client, sessionId);
    const { timeline } = await runner.client.getSession(sessionId);
    expect(timeline.find((entry) => entry.stage === "kernel-running")?.detail).toBe("Kernel.Started");
  });

  it("rebuilds the dated stages after a supervisor restart, and says the running is the new supervisor's", async () => {
    const { sessionId } = await runner.client.createSession(kubeSessionBody({}, { inspect: true }));
    await eventsUntil(runner.client, sessionId, (event) => event.type === "run" && event.phase === "started");
    await waitFor("the kernel's start on the timeline", async () => (await runner.client.getSession(sessionId)).timeline.some((entry) => entry.stage === "kernel-running") || undefined);
    const before = (await runner.client.getSession(sessionId)).timeline;
    await runner.stopSupervisor("SIGKILL");
    await runner.startSupervisor();
    await waitFor("the session to be adopted", async () => (await runner.client.getSession(sessionId).catch(() => undefined))?.status.kind === "running" || undefined);
    // The kernel's inspector replays its frames to the new supervisor, with their timestamps.
    await waitFor("the kernel's start again", async () => (await runner.client.getSession(sessionId)).timeline.some((entry) => entry.stage === "kernel-running") || undefined);
    const after = (await runner.client.getSession(sessionId)).timeline;
    const dated = (timeline: TimelineEntry[]) => timeline.filter((entry) => ["admitted", "scheduled", "bundle-delivered", "container-started", "kernel-running"].includes(entry.stage));
    expect(dated(after)).toEqual(dated(before));
    expect(after.find((entry) => entry.stage === "running")?.detail).toBe("as a restarted supervisor took the pod over");
    await runner.client.deleteSession(sessionId);
  });
});

describe("a watch session's timeline on the simulated cluster", () => {
  let runner: ClusterRunner;
  beforeAll(async () => {
    runner = await startClusterRunner({ env: { RUNNER_WATCH_SESSIONS: "true" } });
  });
  afterAll(async () => {
    await waitFor("every pod to be gone", async () => (await runner.sessionPods()).length === 0 || undefined, 30_000);
    await runner?.close();
  });

  it("dates its pod's start by the workspace container, its kernel by its frame, and each reload's end", async () => {
    const entry = "web/telo.yaml";
    const { sessionId } = await runner.client.createSession(
      kubeSessionBody({}, { mode: "watch", apps: [{ name: "web", entryRelativePath: entry, io: "tty" }], bundle: { entryRelativePath: entry, files: [{ relativePath: entry, contents: "kind: Telo.Application\n" }] } }),
    );
    await eventsUntil(runner.client, sessionId, (event) => event.type === "run" && event.phase === "started");
    await runner.client.reload(sessionId);
    await eventsUntil(runner.client, sessionId, (event) => event.type === "run" && event.phase === "started" && event.generation === 2);
    const { timeline } = await runner.client.getSession(sessionId);
    expect(stagesOf(timeline).slice(0, 1)).toEqual(["admitted"]);
    for (const stage of ["scheduled", "image-pulled", "container-started", "running", "kernel-running", "completed"]) expect(stagesOf(timeline)).toContain(stage);
    expect(timeline.find((each) => each.stage === "completed")?.detail).toMatch(/^web run 1 completed with code 0 after \d+ ms$/);
    await runner.client.deleteSession(sessionId);
  });
});

describe("a warm start's timeline on the simulated cluster", () => {
  let runner: ClusterRunner;
  beforeAll(async () => {
    runner = await startClusterRunner({ env: { RUNNER_WARM_POOL_SIZE: "1" } });
  });
  afterAll(async () => {
    if (!runner) return;
    // Pool pods outlive the supervisor by design: stopped, it refills nothing, and they go.
    await runner.stopSupervisor();
    await runner.core.deleteCollectionNamespacedPod({ namespace: SESSION_NAMESPACE, labelSelector: `${LABEL.pool}=true`, gracePeriodSeconds: 0 });
    await waitFor("the pool pods to be gone", async () => (await runner.sessionPods()).length === 0 || undefined, 20_000);
    await runner.close();
  });

  it("has the claim instead of the pool pod's own start, which predates the session", async () => {
    await waitFor("a ready pool pod", async () => valueOf(await scrape(runner.baseUrl), "runner_warm_pool_pods", { state: "ready" }) === 1 || undefined, 20_000);
    const { sessionId } = await runner.client.createSession(kubeSessionBody({ output: "warm\n", "run-ms": 300 }));
    await eventsUntil(runner.client, sessionId);
    const { timeline } = await runner.client.getSession(sessionId);
    expect(stagesOf(timeline)).toEqual(["admitted", "warm-claimed", "running", "kernel-running", "completed"]);
    expect(timeline[1]?.detail).toMatch(/^telo-pool-/);
  });
});
