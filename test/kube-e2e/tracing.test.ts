/**
 * Traces (docs/tracing.md), read back from a real receiver: a session's start is one trace from
 * the api's POST through the internal link to the supervisor, its start span with the pod's
 * stages as events and every Kubernetes call it made; its stop is another. With two replicas, a
 * stop sent to the replica that does not own the session crosses the peer link: the api's spans
 * are one replica's, the supervisor's and the Kubernetes calls the other's, under one trace id.
 *
 * On the simulated cluster (`npm test`) the receiver is an OTLP/HTTP JSON one in this process;
 * on the real one (`npm run test:cluster`) it is Jaeger, fed over OTLP/HTTP protobuf and read
 * through its query API. `K8S_RUNNER_TRACE_RECEIVER=jaeger` takes Jaeger on the simulated cluster
 * too (a machine without root for the tier).
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type ClusterRunner, ON_REAL_CLUSTER, kubeSessionBody, startClusterRunner } from "../support/kube-runner.ts";
import { type ReplicaSet, startReplicaSet } from "../support/replica-set.ts";
import { eventsUntil, isStatus } from "../support/streams.ts";
import { type RecordedSpan, type TraceReceiver, jaegerReceiver, newTraceparent, otlpReceiver } from "../support/trace-receiver.ts";
import { waitFor } from "../support/wait.ts";

const START_MS = ON_REAL_CLUSTER ? 90_000 : 20_000;
/** Spans leave a process in batches this often (OTEL_BSP_SCHEDULE_DELAY): a test waits a moment, not 5 s. */
const BATCH_MS = 200;
const SPANS_MS = ON_REAL_CLUSTER ? 30_000 : 15_000;

let receiver: TraceReceiver;

beforeAll(async () => {
  receiver = ON_REAL_CLUSTER || process.env.K8S_RUNNER_TRACE_RECEIVER === "jaeger" ? await jaegerReceiver() : await otlpReceiver();
}, 600_000);
afterAll(() => receiver?.close());

const tracingEnv = () => ({
  OTEL_EXPORTER_OTLP_ENDPOINT: receiver.endpoint,
  OTEL_EXPORTER_OTLP_PROTOCOL: receiver.protocol,
  OTEL_BSP_SCHEDULE_DELAY: String(BATCH_MS),
  // Each process says when it starts the SDK (tracing-off.test.ts holds the other side of it).
  LOG_LEVEL: "info",
});

/** A request through `via` carrying a fresh `traceparent`; its trace's id and the client span's id. */
async function traced(via: ClusterRunner, method: string, path: string, body?: unknown) {
  const parent = newTraceparent();
  const response = await fetch(`${via.baseUrl}${path}`, {
    method,
    headers: { traceparent: parent.header, ...(body !== undefined && { "content-type": "application/json" }) },
    ...(body !== undefined && { body: JSON.stringify(body) }),
  });
  const answer = response.status === 204 ? undefined : ((await response.json()) as { sessionId?: string });
  return { status: response.status, answer, ...parent };
}

/** The one span of the trace matching `what`, failing with the trace's names when none or several do. */
function one(spans: RecordedSpan[], what: Partial<Pick<RecordedSpan, "name" | "kind" | "service" | "parentId">>): RecordedSpan {
  const found = spans.filter((span) => Object.entries(what).every(([key, value]) => span[key as keyof RecordedSpan] === value));
  if (found.length !== 1) throw new Error(`${found.length} spans match ${JSON.stringify(what)} among ${spans.map((span) => `${span.service}:${span.name}`).join(", ")}`);
  return found[0]!;
}

/** Whether `span` descends from `ancestor` within the trace. */
function descendsFrom(spans: RecordedSpan[], span: RecordedSpan, ancestor: RecordedSpan): boolean {
  const byId = new Map(spans.map((each) => [each.spanId, each]));
  for (let at = byId.get(span.parentId ?? ""); at; at = byId.get(at.parentId ?? "")) if (at.spanId === ancestor.spanId) return true;
  return false;
}

/** The trace's spans once `complete` finds what it needs in them (spans arrive in batches, per process). */
function traceOnce<T>(traceId: string, what: string, complete: (spans: RecordedSpan[]) => T): Promise<{ spans: RecordedSpan[]; found: T }> {
  return waitFor(what, async () => {
    const spans = await receiver.spans(traceId);
    return { spans, found: complete(spans) };
  }, SPANS_MS);
}

/** The api's and the supervisor's spans of a relayed call, linked parent to child across the link. */
function acrossTheLink(spans: RecordedSpan[], method: string, path: string, client: string) {
  const apiServer = one(spans, { name: `${method} /v1${path}`, kind: "server", service: "k8s-runner-api", parentId: client });
  const apiClient = one(spans, { name: `${method} /internal${path}`, kind: "client", parentId: apiServer.spanId });
  const supervisor = one(spans, { name: `${method} /internal${path}`, kind: "server", service: "k8s-runner-supervisor", parentId: apiClient.spanId });
  return { apiServer, apiClient, supervisor };
}

describe(`traces of one replica on the ${ON_REAL_CLUSTER ? "real" : "simulated"} cluster`, () => {
  let runner: ClusterRunner;
  beforeAll(async () => {
    runner = await startClusterRunner({ env: tracingEnv() });
  }, 3 * START_MS);
  afterAll(() => runner?.close());

  it("follows a start from the POST through both processes to every Kubernetes call, with the pod's stages as events, a handover and a stop", async () => {
    expect(runner.logs().match(/tracing on/g)).toHaveLength(2);
    const start = await traced(runner, "POST", "/v1/sessions", kubeSessionBody());
    expect(start.status).toBe(201);
    const sessionId = start.answer!.sessionId!;
    await eventsUntil(runner.client, sessionId, isStatus("running"));

    // The attach follows `running`, so its span may leave in a later batch than the start's.
    const { spans, found } = await traceOnce(start.traceId, "the start's trace with its start span and the attach", (spans) => {
      const link = acrossTheLink(spans, "POST", "/sessions", start.spanId);
      return { ...link, started: one(spans, { name: "session.start", service: "k8s-runner-supervisor", parentId: link.supervisor.spanId }), attach: one(spans, { name: "terminal.attach" }) };
    });
    expect(found.apiServer.attributes["k8s_runner.session_id"]).toBe(sessionId);
    expect(found.apiClient.attributes["k8s_runner.link"]).toBe("unix");
    expect(found.started.attributes["k8s_runner.session_id"]).toBe(sessionId);
    // The pod's stages, in the order the timeline has them.
    expect(found.started.events).toEqual(expect.arrayContaining(["scheduled", "container-started", "running"]));
    const kubeCalls = spans.filter((span) => span.name.startsWith("kube "));
    expect(kubeCalls.map((span) => span.name)).toContain("kube create pods");
    for (const call of kubeCalls) {
      expect(call.service).toBe("k8s-runner-supervisor");
      expect(call.kind).toBe("client");
      expect(descendsFrom(spans, call, found.supervisor)).toBe(true);
    }
    const created = kubeCalls.find((span) => span.name === "kube create pods")!;
    expect(created.attributes["http.response.status_code"]).toBe(201);
    expect(descendsFrom(spans, created, found.started)).toBe(true);
    // The terminal's attach to the pod, under the start that opened it.
    expect(found.attach.kind).toBe("client");
    expect(descendsFrom(spans, found.attach, found.started)).toBe(true);

    // A new supervisor takes the running session over from its pod (the last one killed): a
    // handover, a trace of its own, with the adopted session's start and its Kubernetes calls under it.
    await runner.stopSupervisor("SIGKILL");
    await runner.startSupervisor();
    const takenOver = await waitFor("the handover's trace with the adopted session's start", async () => {
      const traces = await receiver.tracesWith("k8s-runner-supervisor", "handover.take_over");
      return traces.find((spans) => spans.some((span) => span.name === "session.start" && span.attributes["k8s_runner.session_id"] === sessionId));
    }, SPANS_MS);
    const takeOver = one(takenOver, { name: "handover.take_over" });
    expect(takeOver.parentId).toBeUndefined();
    expect(takeOver.attributes["k8s_runner.sessions"]).toBe(1);
    const adopted = one(takenOver, { name: "session.start" });
    expect(adopted.attributes["k8s_runner.adopted"]).toBe(true);
    expect(descendsFrom(takenOver, adopted, takeOver)).toBe(true);
    const claims = takenOver.filter((span) => span.name.startsWith("kube "));
    expect(claims.length).toBeGreaterThan(0);
    for (const call of claims) expect(descendsFrom(takenOver, call, takeOver)).toBe(true);
    await eventsUntil(runner.client, sessionId, isStatus("running"));

    const stop = await traced(runner, "DELETE", `/v1/sessions/${sessionId}`);
    expect(stop.status).toBe(204);
    const stopped = await traceOnce(stop.traceId, "the stop's trace with its pod's deletion", (spans) => ({
      ...acrossTheLink(spans, "DELETE", "/sessions/:id", stop.spanId),
      deleted: one(spans, { name: "kube delete pods" }),
    }));
    expect(descendsFrom(stopped.spans, stopped.found.deleted, stopped.found.supervisor)).toBe(true);
    expect(stopped.found.apiServer.attributes["http.response.status_code"]).toBe(204);
  });
});

describe(`traces of two replicas on the ${ON_REAL_CLUSTER ? "real" : "simulated"} cluster`, () => {
  let set: ReplicaSet;
  beforeAll(async () => {
    set = await startReplicaSet(["a", "b"], { shards: 4, leaseSeconds: 3, startMs: START_MS, env: tracingEnv() });
  }, 3 * START_MS);
  afterAll(() => set?.close());

  it("carries a forwarded call's trace across the peer link: one replica's api, the other's supervisor and Kubernetes calls", async () => {
    const { a, b } = set.replicas as Record<"a" | "b", ClusterRunner>;
    // A session is admitted and owned by the replica that took its POST (docs/replicas.md).
    const start = await traced(a, "POST", "/v1/sessions", kubeSessionBody());
    expect(start.status).toBe(201);
    const sessionId = start.answer!.sessionId!;
    await eventsUntil(a.client, sessionId, isStatus("running"));
    const started = await traceOnce(start.traceId, "the start's trace on replica a", (spans) => {
      const link = acrossTheLink(spans, "POST", "/sessions", start.spanId);
      return { ...link, started: one(spans, { name: "session.start", parentId: link.supervisor.spanId }) };
    });
    expect(new Set(started.spans.map((span) => span.replica))).toEqual(new Set(["replica-a"]));

    // Sent to b, which forwards it to a's supervisor over the peer link.
    const stop = await traced(b, "DELETE", `/v1/sessions/${sessionId}`);
    expect(stop.status).toBe(204);
    const { spans, found } = await traceOnce(stop.traceId, "the forwarded stop's trace across the peer link", (spans) => ({
      ...acrossTheLink(spans, "DELETE", "/sessions/:id", stop.spanId),
      deleted: one(spans, { name: "kube delete pods" }),
    }));
    expect(found.apiServer.replica).toBe("replica-b");
    expect(found.apiClient.replica).toBe("replica-b");
    expect(found.apiClient.attributes["k8s_runner.link"]).toBe("peer");
    expect(found.supervisor.replica).toBe("replica-a");
    expect(found.deleted.replica).toBe("replica-a");
    expect(descendsFrom(spans, found.deleted, found.apiServer)).toBe(true);
    expect(new Set(spans.map((span) => span.traceId))).toEqual(new Set([stop.traceId]));
  });
});
