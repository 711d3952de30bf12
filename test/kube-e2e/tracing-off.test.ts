/**
 * Tracing off (docs/tracing.md): with the exporter turned off, a runner whose OTLP endpoint
 * names a live receiver sends it nothing, through a traced start and stop, and neither process
 * starts the SDK. On the simulated cluster only: what it checks is the runner's own processes.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type KubeRunner, kubeSessionBody, startKubeRunner } from "../support/kube-runner.ts";
import { eventsUntil, isStatus } from "../support/streams.ts";
import { type TraceReceiver, newTraceparent, otlpReceiver } from "../support/trace-receiver.ts";

const BATCH_MS = 100;

describe("a runner with tracing off", () => {
  let receiver: TraceReceiver;
  let runner: KubeRunner;
  beforeAll(async () => {
    receiver = await otlpReceiver();
    runner = await startKubeRunner({
      env: { OTEL_TRACES_EXPORTER: "none", OTEL_EXPORTER_OTLP_ENDPOINT: receiver.endpoint, OTEL_EXPORTER_OTLP_PROTOCOL: "http/json", OTEL_BSP_SCHEDULE_DELAY: String(BATCH_MS), LOG_LEVEL: "info" },
    });
  }, 30_000);
  afterAll(async () => {
    await runner?.close();
    await receiver?.close();
  });

  it("sends nothing for a traced start and stop, and starts no SDK in either process", async () => {
    const created = await fetch(`${runner.baseUrl}/v1/sessions`, {
      method: "POST",
      headers: { traceparent: newTraceparent().header, "content-type": "application/json" },
      body: JSON.stringify(kubeSessionBody()),
    });
    expect(created.status).toBe(201);
    const { sessionId } = (await created.json()) as { sessionId: string };
    await eventsUntil(runner.client, sessionId, isStatus("running"));
    expect((await fetch(`${runner.baseUrl}/v1/sessions/${sessionId}`, { method: "DELETE", headers: { traceparent: newTraceparent().header } })).status).toBe(204);
    // Absence has no event to wait for: ten batch periods, in which an SDK would have exported.
    await new Promise((resolve) => setTimeout(resolve, 10 * BATCH_MS));
    expect(receiver.requests()).toBe(0);
    // Each process says so when it starts the SDK (src/api/main.ts, src/supervisor/main.ts).
    expect(runner.logs()).toContain("api listening");
    expect(runner.logs()).not.toContain("tracing on");
  });
});
