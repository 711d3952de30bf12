/**
 * The Kubernetes backend's figures against the simulated cluster, scraped from GET /metrics:
 * the typed clients' requests agree with what the cluster received, failures are counted by
 * code, the attach stream of a running session is open, and a dropped pod watch is restarted.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { CREATE_ATTEMPTS } from "../../src/kube/retry/create-retry.ts";
import { waitFor } from "../support/wait.ts";
import { type KubeRunner, startKubeRunner } from "../support/kube-runner.ts";
import { sessionBody } from "../support/session-body.ts";
import { type Sample, scrape, valueOf } from "../support/metrics.ts";
import { eventsUntil, isStatus } from "../support/streams.ts";

const supervisor = { process: "supervisor" };

/** The cluster's per "verb resource" counts, less the streams that bypass the typed clients (the watch, pods/attach). */
function typedClientCalls(counts: Record<string, number>): Record<string, number> {
  return Object.fromEntries(Object.entries(counts).filter(([key]) => !key.startsWith("watch ") && key !== "get pods/attach"));
}

function countedCalls(samples: Sample[]): Record<string, number> {
  return Object.fromEntries(
    samples
      .filter((sample) => sample.name === "runner_kube_requests_total" && sample.labels.process === "supervisor")
      .map((sample) => [`${sample.labels.verb} ${sample.labels.resource}`, sample.value]),
  );
}

describe("Kubernetes figures", () => {
  let runner: KubeRunner;
  beforeAll(async () => {
    runner = await startKubeRunner();
    // A fresh supervisor against freshly reset cluster counters: both count the same requests from here on.
    await runner.stopSupervisor();
    runner.sim.resetCounters();
    await runner.startSupervisor();
  });
  afterAll(() => runner?.close());

  let sessionId: string;

  it("counts every typed-client request the cluster received, by verb and resource, and the open attach stream", async () => {
    ({ sessionId } = await runner.client.createSession(sessionBody()));
    await eventsUntil(runner.client, sessionId, isStatus("running"));
    await waitFor("the attach", () => runner.sim.counters().attachSessions === 1 || undefined);
    let last = "";
    const samples = await waitFor("the counted requests to match the cluster's", async () => {
      const scraped = await scrape(runner.baseUrl);
      const [counted, received] = [countedCalls(scraped), typedClientCalls(runner.sim.counters().requests)].map((calls) => JSON.stringify(Object.entries(calls).sort()));
      last = `${counted} vs ${received}`;
      return counted === received ? scraped : undefined;
    }).catch((error: Error) => {
      throw new Error(`${error.message}: ${last}`);
    });
    expect(valueOf(samples, "runner_kube_requests_total", { ...supervisor, verb: "create", resource: "pods" })).toBe(1);
    expect(valueOf(samples, "runner_attach_streams_open", supervisor)).toBe(1);
  });

  it("counts a refused request as an error with its code", async () => {
    // Every attempt of the bounded create retry refused: the start fails.
    runner.sim.faults.failNext({ verb: "create", resource: "pods", code: 500, count: CREATE_ATTEMPTS });
    const failed = await runner.client.createSession(sessionBody());
    await eventsUntil(runner.client, failed.sessionId, isStatus("failed"));
    const samples = await scrape(runner.baseUrl);
    expect(valueOf(samples, "runner_kube_request_errors_total", { ...supervisor, verb: "create", resource: "pods", code: "500" })).toBe(CREATE_ATTEMPTS);
    expect(valueOf(samples, "runner_session_starts_total", { ...supervisor, mode: "run", outcome: "failed" })).toBe(1);
    expect(valueOf(samples, "runner_session_start_failures_total", { ...supervisor, mode: "run", reason: "create" })).toBe(1);
  });

  it("counts a restart of the dropped pod watch", async () => {
    expect(runner.sim.faults.dropWatches("pods")).toBeGreaterThanOrEqual(1);
    await waitFor("a watch restart", async () => valueOf(await scrape(runner.baseUrl), "runner_pod_watch_restarts_total", supervisor) >= 1 || undefined);
  });

  it("closes the attach stream when the session stops", async () => {
    await runner.client.deleteSession(sessionId);
    await eventsUntil(runner.client, sessionId, isStatus("stopped"));
    await waitFor("no open attach stream", async () => valueOf(await scrape(runner.baseUrl), "runner_attach_streams_open", supervisor) === 0 || undefined);
  });
});
