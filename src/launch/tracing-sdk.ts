/**
 * The OpenTelemetry SDK, set up for one process (docs/tracing.md): W3C trace context, an
 * AsyncLocalStorage context manager (the same mechanism as the request id's), the sampler and
 * the exporter the configuration names, spans batched. Loaded only when tracing is on
 * (src/launch/tracing.ts imports it on demand), so a runner without an exporter loads none of it.
 */
import { context, propagation, trace } from "@opentelemetry/api";
import { AsyncLocalStorageContextManager } from "@opentelemetry/context-async-hooks";
import { W3CTraceContextPropagator } from "@opentelemetry/core";
import { OTLPTraceExporter as OtlpJsonExporter } from "@opentelemetry/exporter-trace-otlp-http";
import { OTLPTraceExporter as OtlpProtobufExporter } from "@opentelemetry/exporter-trace-otlp-proto";
import { resourceFromAttributes } from "@opentelemetry/resources";
import {
  AlwaysOffSampler,
  AlwaysOnSampler,
  BatchSpanProcessor,
  ConsoleSpanExporter,
  ParentBasedSampler,
  type Sampler,
  type SpanExporter,
  TraceIdRatioBasedSampler,
  TracerProvider,
} from "@opentelemetry/sdk-trace";
import type { TraceSampler, TracingConfig } from "../config/tracing.ts";

type Enabled = Extract<TracingConfig, { enabled: true }>;

/** Who this process is, on every span it exports. */
export type TracedProcess = { process: "api" | "supervisor"; replica: string | undefined; version: string; instance: string };

function samplerOf(kind: TraceSampler, ratio: number): Sampler {
  const root = kind.endsWith("always_off") ? new AlwaysOffSampler() : kind.endsWith("traceidratio") ? new TraceIdRatioBasedSampler(ratio) : new AlwaysOnSampler();
  return kind.startsWith("parentbased_") ? new ParentBasedSampler({ root }) : root;
}

function exporterOf(exporter: Enabled["exporter"]): SpanExporter {
  if (exporter.kind === "console") return new ConsoleSpanExporter();
  const options = { url: exporter.url, headers: exporter.headers, timeoutMillis: exporter.timeoutMs };
  return exporter.protocol === "http/json" ? new OtlpJsonExporter(options) : new OtlpProtobufExporter(options);
}

/** Sets the SDK up as the process's global tracer provider; returns its flush-and-stop. */
export function startTracingSdk(config: Enabled, who: TracedProcess): () => Promise<void> {
  const resource = resourceFromAttributes({
    // Attributes the operator set come first, so the runner's own identity cannot be lost to them.
    ...config.resourceAttributes,
    "service.name": config.serviceName ?? `k8s-runner-${who.process}`,
    "service.version": who.version,
    "service.instance.id": who.instance,
    "k8s_runner.process": who.process,
    ...(who.replica !== undefined && { "k8s_runner.replica": who.replica }),
  });
  const provider = new TracerProvider({
    resource,
    sampler: samplerOf(config.sampler, config.ratio),
    spanProcessors: [new BatchSpanProcessor({ exporter: exporterOf(config.exporter), scheduledDelayMillis: config.scheduleDelayMs })],
  });
  context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
  // Trace context only (traceparent, tracestate): a client's baggage has no business in the supervisor.
  propagation.setGlobalPropagator(new W3CTraceContextPropagator());
  trace.setGlobalTracerProvider(provider);
  return () => provider.shutdown();
}
