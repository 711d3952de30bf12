/**
 * The warm pool (docs/kubernetes.md "Warm pool") through the runner's two processes on the simulated cluster, whose
 * pool pods run the real waiting script (busybox sh, the claim long-poll, the bundle fetch, the
 * exec of the kernel): what a claim delivers, that a pod is claimed once, refills, adoption
 * after a restart, the cold fallback, an idle pod's replacement. Counts and states, no timings.
 */
import type { V1Pod } from "@kubernetes/client-node";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { LABEL } from "../../src/kube/specs/names.ts";
import { SESSION_RECORD_ANNOTATION, sessionRecordAnnotation } from "../../src/kube/specs/session-record.ts";
import { type KubeRunner, SESSION_NAMESPACE, kubeSessionBody, startKubeRunner } from "../support/kube-runner.ts";
import { eventsOf, eventsUntil, framesToClose, framesUntilText, isStatus, textOf } from "../support/streams.ts";
import { waitFor } from "../support/wait.ts";
import { scrape, valueOf } from "../support/metrics.ts";
import { poolPodDeadlineSeconds } from "../../src/kube/specs/pool-pod.ts";

const POOL_SIZE = 2;

async function pods(runner: KubeRunner): Promise<V1Pod[]> {
  return (await runner.core.listNamespacedPod({ namespace: SESSION_NAMESPACE })).items;
}

const isPool = (pod: V1Pod) => pod.metadata?.labels?.[LABEL.pool] === "true";

/** Unclaimed pool pods whose waiting shell runs (the container started). */
async function readyPoolPods(runner: KubeRunner): Promise<string[]> {
  return (await pods(runner))
    .filter((pod) => isPool(pod) && !pod.metadata?.deletionTimestamp && pod.status?.containerStatuses?.[0]?.state?.running)
    .map((pod) => pod.metadata!.name!)
    .sort();
}

/**
 * The pool at its size, as the cluster and the runner both see it: a pod whose container runs
 * is claimable only once its shell has polled the supervisor (the runner's ready gauge), and a
 * session created before that would rightly start cold.
 */
function poolFull(runner: KubeRunner, size = POOL_SIZE): Promise<string[]> {
  return waitFor(`${size} ready pool pods`, async () => {
    const ready = await readyPoolPods(runner);
    if (ready.length !== size) return undefined;
    return valueOf(await scrape(runner.baseUrl), "runner_warm_pool_pods", { state: "ready" }) === size ? ready : undefined;
  });
}

/** A session whose kernel reports what it was handed (argv, env, /app files) and exits 0. */
function reportingBody() {
  return kubeSessionBody(
    { "report-start": true, "exit-code": 0, "run-ms": 300 },
    {
      env: { GREETING: "it's \"quoted\" $HOME `x`", MULTI: "line one\nline two", EMPTY: "", HOME: "/elsewhere" },
      bundle: {
        entryRelativePath: "apps/main.yaml",
        files: [
          { relativePath: "apps/main.yaml", contents: "kind: Telo.Application\n" },
          { relativePath: "lib/it's here.txt", contents: "hello\n" },
          { relativePath: "bin/blob", contents: Buffer.from([0, 1, 2, 255]).toString("base64"), encoding: "base64" },
        ],
      },
    },
  );
}

/** The report lines of a session's output, in order. */
async function startReport(runner: KubeRunner, sessionId: string): Promise<string[]> {
  const events = eventsOf(await eventsUntil(runner.client, sessionId));
  expect(events.at(-1)).toEqual({ type: "status", status: { kind: "exited", code: 0 } });
  const text = textOf(await framesToClose(runner.client.terminal(sessionId)));
  return text.split(/\r?\n/).filter((line) => line.startsWith("[sim] "));
}

describe("the warm pool", () => {
  let warm: KubeRunner;
  beforeAll(async () => {
    warm = await startKubeRunner({ env: { RUNNER_WARM_POOL_SIZE: String(POOL_SIZE) } });
  });
  afterAll(async () => {
    await warm?.close();
  });

  it("keeps its pods hardened and free of session data", async () => {
    const [name] = await poolFull(warm);
    const pod = (await pods(warm)).find((candidate) => candidate.metadata?.name === name)!;
    expect(pod.metadata?.labels?.[LABEL.sessionId]).toBeUndefined();
    expect(pod.metadata?.annotations?.[SESSION_RECORD_ANNOTATION]).toBeUndefined();
    const container = pod.spec!.containers[0]!;
    expect(container.env?.map((variable) => variable.name)).toEqual(["TELO_CACHE_DIR", "HOME", "npm_config_cache", "npm_config_update_notifier", "FORCE_COLOR", "CLAIM_URL"]);
    // The claim URL names the pool pod's own route, nothing of a session.
    expect(container.env?.at(-1)?.value).toMatch(new RegExp(`/internal/pool/${name}\\?token=[0-9a-f]{48}$`));
    expect(JSON.stringify(pod)).not.toContain("/internal/bundles/");
  });

  it("delivers the same files, env and command line as a cold start", async () => {
    const cold = await startKubeRunner();
    try {
      await poolFull(warm);
      const warmStarts = async () => valueOf(await scrape(warm.baseUrl), "runner_warm_pool_starts_total", { start: "warm" });
      const before = await warmStarts();
      const warmSession = await warm.client.createSession(reportingBody());
      const coldSession = await cold.client.createSession(reportingBody());
      const [warmReport, coldReport] = await Promise.all([startReport(warm, warmSession.sessionId), startReport(cold, coldSession.sessionId)]);
      // One of them claimed a pool pod, the other created its own.
      expect(await warmStarts()).toBe(before + 1);
      expect(warm.sim.recordedRequests().filter((request) => request.verb === "update" && request.resource === "pods")).toHaveLength(1);
      expect(cold.sim.recordedRequests().filter((request) => request.verb === "update" && request.resource === "pods")).toHaveLength(0);
      expect(warmReport).toEqual(coldReport);
      // What both reports say: the kernel env and the session's, the cold command line, the bundle.
      expect(coldReport).toContain('[sim] argv ["telo","run","/app/apps/main.yaml"]');
      expect(coldReport).toContain(`[sim] env GREETING=${JSON.stringify("it's \"quoted\" $HOME `x`")}`);
      expect(coldReport).toContain('[sim] env HOME="/home/telo"');
      expect(coldReport).toContain('[sim] env EMPTY=""');
      expect(coldReport.filter((line) => line.startsWith("[sim] file "))).toHaveLength(3);
      expect(warmReport.join("\n")).not.toContain("CLAIM_URL");
    } finally {
      await cold.close();
    }
  });

  it("makes a claimed pod the session's: its record, labels and TTL; the pool refills", async () => {
    const before = await poolFull(warm);
    const { sessionId } = await warm.client.createSession(kubeSessionBody());
    await eventsUntil(warm.client, sessionId, isStatus("running"));
    const sessionPods = (await pods(warm)).filter((pod) => pod.metadata?.labels?.[LABEL.sessionId] === sessionId);
    expect(sessionPods.map((pod) => pod.metadata?.name)).toHaveLength(1);
    const claimed = sessionPods[0]!;
    expect(before).toContain(claimed.metadata?.name);
    expect(isPool(claimed)).toBe(false);
    expect(JSON.parse(claimed.metadata!.annotations![SESSION_RECORD_ANNOTATION]!)).toMatchObject({ sessionId, mode: "run", envNames: [] });
    // The session's TTL from the claim, on a deadline lowered from the pool pod's own.
    expect(claimed.spec?.activeDeadlineSeconds).toBeGreaterThanOrEqual(3600);
    expect(claimed.spec?.activeDeadlineSeconds).toBeLessThan(poolPodDeadlineSeconds(600, 3600));
    // The pool refills in the background to its size, the claimed pod not among them.
    const after = await poolFull(warm);
    expect(after).not.toContain(claimed.metadata?.name);
    await warm.client.deleteSession(sessionId);
    await waitFor("the claimed pod to be gone", async () => !(await pods(warm)).some((pod) => pod.metadata?.name === claimed.metadata?.name) || undefined);
  });

  it("serves a claim again when its answer is lost on the way to the pod: the session runs", async () => {
    await poolFull(warm);
    const lostBefore = warm.sim.counters().lostDownloads;
    const warmStarts = async () => valueOf(await scrape(warm.baseUrl), "runner_warm_pool_starts_total", { start: "warm" });
    const warmBefore = await warmStarts();
    // Only a claimed pod's poll gets a 2xx: this loses exactly the claim's first answer.
    warm.sim.faults.loseDownloads({ namespace: SESSION_NAMESPACE, urlIncludes: "/internal/pool/" });
    const { sessionId } = await warm.client.createSession(kubeSessionBody({ "report-start": true, "exit-code": 0, "run-ms": 300 }));
    const report = await startReport(warm, sessionId);
    expect(warm.sim.counters().lostDownloads).toBe(lostBefore + 1);
    expect(await warmStarts()).toBe(warmBefore + 1);
    // The pod polled again, got the same claim, fetched the bundle and exec'd the kernel.
    expect(report).toContain('[sim] argv ["telo","run","/app/telo.yaml"]');
    expect(report.filter((line) => line.startsWith("[sim] file "))).toHaveLength(1);
  });

  it("relays an inspected kernel's debug stream from a claimed pod", async () => {
    await poolFull(warm);
    const { sessionId } = await warm.client.createSession(kubeSessionBody({}, { inspect: true }));
    const events = eventsOf(await eventsUntil(warm.client, sessionId, (event) => event.type === "debug" && event.frame.event === "Kernel.Started"));
    expect(events.filter((event) => event.type === "debug").map((event) => event.type === "debug" && event.frame.event)).toEqual(["Kernel.Starting", "Kernel.PortsResolved", "Kernel.Started"]);
    expect((await pods(warm)).find((pod) => pod.metadata?.labels?.[LABEL.sessionId] === sessionId)?.metadata?.name).toMatch(/^telo-pool-/);
    await warm.client.deleteSession(sessionId);
  });

  it("never claims a pod twice: concurrent creates get distinct pods, the rest start cold", async () => {
    await poolFull(warm);
    const starts = async () => {
      const samples = await scrape(warm.baseUrl);
      return { warm: valueOf(samples, "runner_warm_pool_starts_total", { start: "warm" }), cold: valueOf(samples, "runner_warm_pool_starts_total", { start: "cold" }) };
    };
    const before = await starts();
    const count = POOL_SIZE + 3;
    const created = await Promise.all(Array.from({ length: count }, () => warm.client.createSession(kubeSessionBody({ "report-start": true }))));
    for (const { sessionId } of created) {
      await eventsUntil(warm.client, sessionId, isStatus("running"));
      // Every kernel started, warm or cold: it reported what it was handed.
      const terminal = warm.client.terminal(sessionId);
      expect(textOf(await framesUntilText(terminal, "[sim] argv"))).toContain("/app/telo.yaml");
      terminal.close();
    }
    const bySession = new Map<string, string[]>();
    for (const pod of await pods(warm)) {
      const id = pod.metadata?.labels?.[LABEL.sessionId];
      if (id) bySession.set(id, [...(bySession.get(id) ?? []), pod.metadata!.name!]);
    }
    const used = created.map(({ sessionId }) => bySession.get(sessionId) ?? []);
    // One pod per session, no pod for two sessions. How many were warm depends on how fast the
    // refill after the first claims is ready (a refilled pod may serve a later create), so
    // the counts are checked against the runner's own: each start counted once, warm or cold.
    expect(used.every((names) => names.length === 1)).toBe(true);
    expect(new Set(used.flat()).size).toBe(count);
    const warmOnes = used.flat().filter((name) => name.startsWith("telo-pool-"));
    expect(warmOnes.length).toBeGreaterThan(0);
    const after = await starts();
    expect(after.warm - before.warm).toBe(warmOnes.length);
    expect(after.cold - before.cold).toBe(count - warmOnes.length);
    for (const { sessionId } of created) await warm.client.deleteSession(sessionId);
  });

  it("starts cold what it cannot serve: another image, an env name a shell cannot export", async () => {
    await poolFull(warm);
    const other = await warm.client.createSession(kubeSessionBody({}, { config: { image: "telorun/node:1.2.3", pullPolicy: "missing" } }));
    const dotted = await warm.client.createSession(kubeSessionBody({}, { env: { "my.key": "v" } }));
    for (const { sessionId } of [other, dotted]) {
      await eventsUntil(warm.client, sessionId, isStatus("running"));
      expect((await pods(warm)).some((pod) => pod.metadata?.name === `telo-run-${sessionId}`)).toBe(true);
      await warm.client.deleteSession(sessionId);
    }
    // The pool was left alone.
    expect(await poolFull(warm)).toHaveLength(POOL_SIZE);
  });

  it("survives a supervisor restart: its pods are adopted, not reaped, and serve claims", async () => {
    const before = await poolFull(warm);
    await warm.stopSupervisor("SIGKILL");
    await warm.startSupervisor();
    // Same pods: none reaped, none added (the pool is full with them); ready once their shells poll the new supervisor.
    await waitFor("the adopted pods to be ready", async () => valueOf(await scrape(warm.baseUrl), "runner_warm_pool_pods", { state: "ready" }) === POOL_SIZE || undefined);
    expect(await readyPoolPods(warm)).toEqual(before);
    const { sessionId } = await warm.client.createSession(kubeSessionBody({ "report-start": true }));
    await eventsUntil(warm.client, sessionId, isStatus("running"));
    const claimed = (await pods(warm)).find((pod) => pod.metadata?.labels?.[LABEL.sessionId] === sessionId);
    expect(before).toContain(claimed?.metadata?.name);
    const terminal = warm.client.terminal(sessionId);
    expect(textOf(await framesUntilText(terminal, "[sim] argv"))).toContain("/app/telo.yaml");
    terminal.close();
    await warm.client.deleteSession(sessionId);
  });
});

describe("a claim its supervisor never delivered", () => {
  it("fails the adopted session saying why, instead of leaving it waiting for its TTL", async () => {
    const runner = await startKubeRunner({ env: { RUNNER_WARM_POOL_SIZE: "1" } });
    try {
      const [name] = await poolFull(runner, 1);
      // What a supervisor killed between its claim's update and the pod's poll leaves behind.
      await runner.stopSupervisor("SIGKILL");
      const sessionId = "lostclaim2ab";
      const pod = await runner.core.readNamespacedPod({ name: name!, namespace: SESSION_NAMESPACE });
      const record = sessionRecordAnnotation({ sessionId, mode: "run", createdAt: new Date().toISOString(), apps: [{ name: "app", entryRelativePath: "telo.yaml", ports: [], io: "tty" }], inspect: false, selfContained: false, config: {}, envNames: [] });
      await runner.core.replaceNamespacedPod({
        name: name!,
        namespace: SESSION_NAMESPACE,
        body: { ...pod, metadata: { ...pod.metadata, labels: { [LABEL.managedBy]: "telo-k8s-runner", [LABEL.sessionId]: sessionId }, annotations: record } },
      });
      await runner.startSupervisor();
      const end = eventsOf(await eventsUntil(runner.client, sessionId)).at(-1);
      expect(end).toEqual({
        type: "status",
        status: { kind: "failed", message: 'container "session" failed: Error (exit code 1): [runner] this session was claimed by a runner that restarted before delivering its application' },
      });
    } finally {
      await runner.close();
    }
  });
});

describe("a warm pool with nothing ready", () => {
  it("starts a session cold while no pool pod is ready, and replaces idle pods past their age", async () => {
    // Every pod takes 2 s to start and pool pods are replaced at 1 s: no pool pod is ever ready.
    const runner = await startKubeRunner({ env: { RUNNER_WARM_POOL_SIZE: "1", RUNNER_WARM_POOL_MAX_IDLE_SECONDS: "1" }, sim: { podStartDelayMs: 2000 } });
    try {
      const first = await waitFor("a pool pod", async () => (await pods(runner)).find(isPool)?.metadata?.name);
      const { sessionId } = await runner.client.createSession(kubeSessionBody());
      await eventsUntil(runner.client, sessionId, isStatus("running"));
      expect((await pods(runner)).some((pod) => pod.metadata?.name === `telo-run-${sessionId}`)).toBe(true);
      const samples = await scrape(runner.baseUrl);
      expect(valueOf(samples, "runner_warm_pool_starts_total", { start: "cold" })).toBe(1);
      expect(valueOf(samples, "runner_warm_pool_starts_total", { start: "warm" })).toBe(0);
      await runner.client.deleteSession(sessionId);
      // Past its idle age the pod is deleted and another takes its place.
      await waitFor("a replacement pool pod", async () => {
        const names = (await pods(runner)).filter((pod) => isPool(pod) && !pod.metadata?.deletionTimestamp).map((pod) => pod.metadata!.name!);
        return (names.length === 1 && names[0] !== first) || undefined;
      });
    } finally {
      await runner.close();
    }
  });
});
