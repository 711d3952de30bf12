/**
 * Where the tracing tests send the runner's spans and read them back (docs/tracing.md):
 *
 * - `otlpReceiver`: an OTLP/HTTP receiver written here, a node http server that decodes what
 *   the runner's exporter posts to `/v1/traces` in the JSON protocol (`npm test`);
 * - `jaegerReceiver`: Jaeger v2 (built from its Go module by test/deploy/jaeger.sh), receiving
 *   OTLP over HTTP (protobuf) and answering its query API (`npm run test:cluster`).
 *
 * Both give the spans of one trace in one shape, so one test reads either.
 */
import { type ChildProcess, execFileSync, spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { type IncomingMessage, createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { freePort } from "./ports.ts";
import { stopChild } from "./processes.ts";
import { waitFor } from "./wait.ts";

export type RecordedSpan = {
  traceId: string;
  spanId: string;
  parentId: string | undefined;
  name: string;
  kind: "server" | "client" | "internal" | "producer" | "consumer";
  /** The resource's `service.name`. */
  service: string;
  /** The resource's `k8s_runner.replica`: which replica's process made the span. */
  replica: string | undefined;
  attributes: Record<string, unknown>;
  /** The span's events, by name (a start's stages). */
  events: string[];
};

export type TraceReceiver = {
  /** The OTLP base endpoint (OTEL_EXPORTER_OTLP_ENDPOINT). */
  endpoint: string;
  protocol: "http/json" | "http/protobuf";
  /** What the receiver holds of one trace now. */
  spans(traceId: string): Promise<RecordedSpan[]>;
  /** The traces (each whole) holding a span of `service` named `name`. */
  tracesWith(service: string, name: string): Promise<RecordedSpan[][]>;
  /** How many export requests arrived (the in-test receiver only counts). */
  requests(): number;
  close(): Promise<void>;
};

/** A fresh sampled W3C `traceparent`, as a client that traces its calls sends it. */
export function newTraceparent(): { header: string; traceId: string; spanId: string } {
  // No leading zero: a store that shortens ids cannot make them differ from ours.
  const hex = (bytes: number) => `a${randomBytes(bytes).toString("hex").slice(1)}`;
  const traceId = hex(16);
  const spanId = hex(8);
  return { header: `00-${traceId}-${spanId}-01`, traceId, spanId };
}

type OtlpValue = { stringValue?: string; intValue?: string | number; boolValue?: boolean; doubleValue?: number };
type OtlpAttribute = { key: string; value: OtlpValue };
type OtlpSpan = { traceId: string; spanId: string; parentSpanId?: string; name: string; kind: number; attributes?: OtlpAttribute[]; events?: { name: string }[] };
type OtlpExport = { resourceSpans?: { resource?: { attributes?: OtlpAttribute[] }; scopeSpans?: { spans?: OtlpSpan[] }[] }[] };

const KINDS = ["internal", "internal", "server", "client", "producer", "consumer"] as const;

function attributesOf(list: OtlpAttribute[] | undefined): Record<string, unknown> {
  const value = (v: OtlpValue) => v.stringValue ?? (v.intValue !== undefined ? Number(v.intValue) : (v.boolValue ?? v.doubleValue));
  return Object.fromEntries((list ?? []).map((attribute) => [attribute.key, value(attribute.value)]));
}

function bodyOf(request: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    request.on("data", (chunk: Buffer) => chunks.push(chunk));
    request.on("end", () => resolve(Buffer.concat(chunks).toString("utf8")));
    request.on("error", reject);
  });
}

/** An OTLP/HTTP JSON receiver in this process: every span posted to `/v1/traces`, kept. */
export async function otlpReceiver(): Promise<TraceReceiver> {
  const spans: RecordedSpan[] = [];
  let requests = 0;
  const server = createServer((request, response) => {
    requests++;
    void bodyOf(request).then((text) => {
      if (request.url !== "/v1/traces" || !request.headers["content-type"]?.startsWith("application/json")) {
        response.writeHead(415).end();
        return;
      }
      const posted = JSON.parse(text) as OtlpExport;
      for (const resourceSpans of posted.resourceSpans ?? []) {
        const resource = attributesOf(resourceSpans.resource?.attributes);
        for (const span of (resourceSpans.scopeSpans ?? []).flatMap((scope) => scope.spans ?? [])) {
          spans.push({
            traceId: span.traceId,
            spanId: span.spanId,
            parentId: span.parentSpanId || undefined,
            name: span.name,
            kind: KINDS[span.kind] ?? "internal",
            service: String(resource["service.name"]),
            replica: resource["k8s_runner.replica"] as string | undefined,
            attributes: attributesOf(span.attributes),
            events: (span.events ?? []).map((event) => event.name),
          });
        }
      }
      response.writeHead(200, { "content-type": "application/json" }).end("{}");
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    endpoint: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    protocol: "http/json",
    spans: async (traceId) => spans.filter((span) => span.traceId === traceId),
    tracesWith: async (service, name) => {
      const ids = new Set(spans.filter((span) => span.service === service && span.name === name).map((span) => span.traceId));
      return [...ids].map((id) => spans.filter((span) => span.traceId === id));
    },
    requests: () => requests,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}

/** Jaeger v2's configuration: OTLP over HTTP in, memory storage, the query API; every port a free one. */
function jaegerConfig(ports: { otlp: number; query: number; queryGrpc: number }): string {
  return `service:
  extensions: [jaeger_storage, jaeger_query]
  pipelines:
    traces:
      receivers: [otlp]
      exporters: [jaeger_storage_exporter]
  telemetry:
    metrics:
      level: none
extensions:
  jaeger_storage:
    backends:
      memstore:
        memory:
          max_traces: 10000
  jaeger_query:
    storage:
      traces: memstore
    http:
      endpoint: 127.0.0.1:${ports.query}
    grpc:
      endpoint: 127.0.0.1:${ports.queryGrpc}
receivers:
  otlp:
    protocols:
      http:
        endpoint: 127.0.0.1:${ports.otlp}
exporters:
  jaeger_storage_exporter:
    trace_storage: memstore
`;
}

type JaegerTag = { key: string; value: unknown };
type JaegerTrace = {
  spans: { traceID: string; spanID: string; operationName: string; references?: { refType: string; spanID: string }[]; tags?: JaegerTag[]; logs?: { fields: JaegerTag[] }[]; processID: string }[];
  processes: Record<string, { serviceName: string; tags?: JaegerTag[] }>;
};

const tagsOf = (tags: JaegerTag[] | undefined) => Object.fromEntries((tags ?? []).map((tag) => [tag.key, tag.value]));

/** Jaeger's view of one trace (its query API, `/api/traces/<id>`), in the receivers' shape. */
function jaegerSpans(trace: JaegerTrace): RecordedSpan[] {
  return trace.spans.map((span) => {
    const process = trace.processes[span.processID];
    const tags = tagsOf(span.tags);
    return {
      traceId: span.traceID.padStart(32, "0"),
      spanId: span.spanID,
      parentId: span.references?.find((reference) => reference.refType === "CHILD_OF")?.spanID,
      name: span.operationName,
      kind: (tags["span.kind"] as RecordedSpan["kind"] | undefined) ?? "internal",
      service: process?.serviceName ?? "",
      replica: tagsOf(process?.tags)["k8s_runner.replica"] as string | undefined,
      attributes: tags,
      events: (span.logs ?? []).map((log) => String(tagsOf(log.fields).event)),
    };
  });
}

/** Jaeger, run from the tools cache (built first when missing), until `close`. */
export async function jaegerReceiver(): Promise<TraceReceiver> {
  const binary = execFileSync("bash", [fileURLToPath(new URL("../deploy/jaeger.sh", import.meta.url))], { encoding: "utf8" }).trim();
  const dir = await mkdtemp(join(tmpdir(), "k8s-runner-jaeger-"));
  const ports = { otlp: await freePort(), query: await freePort(), queryGrpc: await freePort() };
  await writeFile(join(dir, "config.yaml"), jaegerConfig(ports));
  const jaeger: ChildProcess = spawn(binary, ["--config", join(dir, "config.yaml")], { stdio: ["ignore", "ignore", "pipe"] });
  let log = "";
  jaeger.stderr?.on("data", (chunk: Buffer) => (log = (log + chunk.toString("utf8")).slice(-8_000)));
  const query = `http://127.0.0.1:${ports.query}`;
  await waitFor("Jaeger's query API", async () => {
    if (jaeger.exitCode !== null) throw new Error(`jaeger exited (${jaeger.exitCode}): ${log}`);
    return (await fetch(`${query}/api/services`)).ok || undefined;
  }, 60_000);
  return {
    endpoint: `http://127.0.0.1:${ports.otlp}`,
    protocol: "http/protobuf",
    async spans(traceId) {
      const response = await fetch(`${query}/api/traces/${traceId}`);
      if (response.status === 404) return [];
      if (!response.ok) throw new Error(`jaeger answered ${response.status}: ${await response.text()}`);
      const { data } = (await response.json()) as { data: JaegerTrace[] };
      return data.flatMap(jaegerSpans);
    },
    async tracesWith(service, name) {
      const search = new URLSearchParams({ service, operation: name, limit: "100", lookback: "1h" });
      const response = await fetch(`${query}/api/traces?${search}`);
      if (!response.ok) throw new Error(`jaeger answered ${response.status}: ${await response.text()}`);
      const { data } = (await response.json()) as { data: JaegerTrace[] | null };
      return (data ?? []).map(jaegerSpans);
    },
    requests: () => 0,
    async close() {
      await stopChild(jaeger);
      await rm(dir, { recursive: true, force: true });
    },
  };
}
