/**
 * Traces, as the code that does the work sees them (docs/tracing.md): spans around whole
 * operations (a request, an internal call, a Kubernetes call, a session's start, an attach, a
 * handover) and the W3C trace context carried on the internal link. Only `@opentelemetry/api`
 * is imported here and by every caller: without an SDK (tracing off, the default) its calls are
 * no-ops that allocate nothing per call beyond what is written below, and nothing here runs per
 * byte or per frame. The SDK is set up, when configured, once per process (src/launch/tracing.ts).
 */
import {
  type Attributes,
  type Context,
  type Span,
  SpanKind,
  SpanStatusCode,
  type TextMapGetter,
  context,
  propagation,
  trace,
} from "@opentelemetry/api";

export { SpanKind, type Span };

/** The instrumentation scope every span of the runner is made under. */
const TRACER_NAME = "k8s-runner";

function tracer() {
  return trace.getTracer(TRACER_NAME);
}

/** Marks `span` failed with `error`'s message and keeps the exception as an event. */
export function failSpan(span: Span, error: unknown): void {
  if (!span.isRecording()) return;
  span.recordException(error instanceof Error ? error : String(error));
  span.setStatus({ code: SpanStatusCode.ERROR, message: error instanceof Error ? error.message : String(error) });
}

/**
 * Runs `work` inside a new span (the active one while it runs, so what it calls is its child),
 * ended when `work` settles; a throw marks it failed and is rethrown. `parent`: the context to
 * start under (a remote one extracted from a request), else the active one.
 */
export async function inSpan<T>(name: string, options: { kind?: SpanKind; attributes?: Attributes; parent?: Context }, work: (span: Span) => Promise<T>): Promise<T> {
  const span = tracer().startSpan(name, { kind: options.kind ?? SpanKind.INTERNAL, ...(options.attributes && { attributes: options.attributes }) }, options.parent);
  try {
    return await context.with(trace.setSpan(options.parent ?? context.active(), span), () => work(span));
  } catch (error) {
    failSpan(span, error);
    throw error;
  } finally {
    span.end();
  }
}

/**
 * A span for a step of a traced operation (a Kubernetes call), or none when nothing is traced
 * now: such steps outside any operation (a Lease renewal every period, the pod watch's relist)
 * would each make a trace of one span. `attributes` is asked only for a span.
 */
export function stepSpan(name: string, kind: SpanKind, attributes: () => Attributes): Span | undefined {
  if (trace.getActiveSpan() === undefined) return undefined;
  return tracer().startSpan(name, { kind, attributes: attributes() });
}

/**
 * `work` inside a child span of the active one (an internal call, the supervisor serving it), or
 * as it is when nothing is traced now: the placement's long polls and the metrics scrapes
 * would otherwise each be a trace.
 */
export function inStepSpan<T>(name: string, kind: SpanKind, attributes: Attributes, work: (span: Span | undefined) => Promise<T>): Promise<T> {
  if (trace.getActiveSpan() === undefined) return work(undefined);
  return inSpan(name, { kind, attributes }, work);
}

/**
 * A span that outlives the call that starts it (a session's start, which settles long after its
 * request is answered): started under the active context, ended by its holder. Runs `work` with
 * it active, so the calls `work` makes, and those they make later, are its children.
 */
export function startLongSpan<T>(name: string, attributes: Attributes, work: (span: Span) => T): T {
  const span = tracer().startSpan(name, { attributes });
  return context.with(trace.setSpan(context.active(), span), () => work(span));
}

/** The headers that carry the active trace context onward (`traceparent`, `tracestate`); none when nothing is traced. */
export function traceHeaders(): Record<string, string> {
  const carrier: Record<string, string> = {};
  propagation.inject(context.active(), carrier);
  return carrier;
}

/** Reads a header of node's incoming headers (http and http2 alike) or of a fetch Headers. */
const headerGetter: TextMapGetter<Record<string, string | string[] | undefined> | Headers> = {
  keys: (carrier) => (carrier instanceof Headers ? [...carrier.keys()] : Object.keys(carrier)),
  get: (carrier, key) => (carrier instanceof Headers ? (carrier.get(key) ?? undefined) : carrier[key]),
};

/** The trace context a request carried (`traceparent`), as a parent for the span that serves it. */
export function remoteContext(headers: Record<string, string | string[] | undefined> | Headers): Context {
  return propagation.extract(context.active(), headers, headerGetter);
}

/** Runs `work` with the trace context `headers` carried active (the supervisor's side of the link). */
export function withRemoteContext<T>(headers: Record<string, string | string[] | undefined>, work: () => T): T {
  return context.with(remoteContext(headers), work);
}
