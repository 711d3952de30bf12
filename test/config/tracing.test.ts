/**
 * Tracing's configuration (src/config/tracing.ts, docs/tracing.md): off unless an exporter is
 * configured, the standard OTEL_* variables shaped once, a bad value refused with its name; and
 * off, no SDK is started (the OpenTelemetry API stays its no-op).
 */
import { readFileSync } from "node:fs";
import { trace } from "@opentelemetry/api";
import { describe, expect, it } from "vitest";
import { ConfigError } from "../../src/config/env-values.ts";
import { loadTracingConfig, tracingEnvSchema } from "../../src/config/tracing.ts";
import { startTracing } from "../../src/launch/tracing.ts";

describe("tracing's configuration", () => {
  it("is off with no exporter configured, with OTEL_TRACES_EXPORTER=none, and with OTEL_SDK_DISABLED", () => {
    expect(loadTracingConfig({})).toEqual({ enabled: false });
    expect(loadTracingConfig({ OTEL_SERVICE_NAME: "runner", OTEL_TRACES_SAMPLER: "always_on" })).toEqual({ enabled: false });
    expect(loadTracingConfig({ OTEL_EXPORTER_OTLP_ENDPOINT: "http://collector:4318", OTEL_TRACES_EXPORTER: "none" })).toEqual({ enabled: false });
    expect(loadTracingConfig({ OTEL_EXPORTER_OTLP_ENDPOINT: "http://collector:4318", OTEL_SDK_DISABLED: "true" })).toEqual({ enabled: false });
  });

  it("turns on with an endpoint, or with OTEL_TRACES_EXPORTER=otlp (to the default local receiver)", () => {
    expect(loadTracingConfig({ OTEL_EXPORTER_OTLP_ENDPOINT: "http://collector:4318/" })).toEqual({
      enabled: true,
      exporter: { kind: "otlp", url: "http://collector:4318/v1/traces", protocol: "http/protobuf", headers: {}, timeoutMs: 10_000 },
      serviceName: undefined,
      resourceAttributes: {},
      sampler: "parentbased_always_on",
      ratio: 1,
      scheduleDelayMs: 5_000,
    });
    expect(loadTracingConfig({ OTEL_TRACES_EXPORTER: "otlp" })).toMatchObject({ exporter: { url: "http://localhost:4318/v1/traces" } });
    expect(loadTracingConfig({ OTEL_TRACES_EXPORTER: "console" })).toMatchObject({ enabled: true, exporter: { kind: "console" } });
  });

  it("takes the traces signal's own variables over the general ones", () => {
    const config = loadTracingConfig({
      OTEL_EXPORTER_OTLP_ENDPOINT: "http://collector:4318",
      OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: "https://traces.example/otlp/v1/traces",
      OTEL_EXPORTER_OTLP_PROTOCOL: "grpc",
      OTEL_EXPORTER_OTLP_TRACES_PROTOCOL: "http/json",
      OTEL_EXPORTER_OTLP_HEADERS: "authorization=Bearer%20abc,x-tenant=a",
      OTEL_EXPORTER_OTLP_TRACES_HEADERS: "x-tenant=b",
      OTEL_EXPORTER_OTLP_TRACES_TIMEOUT: "3000",
      OTEL_SERVICE_NAME: "runner-eu",
      OTEL_RESOURCE_ATTRIBUTES: "deployment.environment=prod, team=platform",
      OTEL_TRACES_SAMPLER: "parentbased_traceidratio",
      OTEL_TRACES_SAMPLER_ARG: "0.25",
    });
    expect(config).toMatchObject({
      exporter: { url: "https://traces.example/otlp/v1/traces", protocol: "http/json", headers: { authorization: "Bearer abc", "x-tenant": "b" }, timeoutMs: 3_000 },
      serviceName: "runner-eu",
      resourceAttributes: { "deployment.environment": "prod", team: "platform" },
      sampler: "parentbased_traceidratio",
      ratio: 0.25,
    });
  });

  it.each([
    [{ OTEL_EXPORTER_OTLP_ENDPOINT: "collector:4318" }, "OTEL_EXPORTER_OTLP_ENDPOINT must be an http(s) URL, got 'collector:4318'."],
    [{ OTEL_EXPORTER_OTLP_ENDPOINT: "http://c:4317", OTEL_EXPORTER_OTLP_PROTOCOL: "grpc" }, /OTEL_EXPORTER_OTLP_PROTOCOL must be http\/protobuf or http\/json .*got 'grpc'/],
    [{ OTEL_EXPORTER_OTLP_PROTOCOL: "http" }, "OTEL_EXPORTER_OTLP_PROTOCOL must be one of http/protobuf, http/json, grpc, got 'http'."],
    [{ OTEL_TRACES_EXPORTER: "jaeger" }, "OTEL_TRACES_EXPORTER must be one of otlp, console, none, got 'jaeger'."],
    [{ OTEL_TRACES_EXPORTER: "otlp", OTEL_RESOURCE_ATTRIBUTES: "team" }, "OTEL_RESOURCE_ATTRIBUTES must be a comma list of key=value, got 'team'."],
    [{ OTEL_TRACES_EXPORTER: "otlp", OTEL_TRACES_SAMPLER: "traceidratio", OTEL_TRACES_SAMPLER_ARG: "2" }, "OTEL_TRACES_SAMPLER_ARG must be a ratio in 0..1 for traceidratio, got '2'."],
    [{ OTEL_TRACES_SAMPLER: "sometimes" }, /OTEL_TRACES_SAMPLER must be one of always_on, /],
    [{ OTEL_BSP_SCHEDULE_DELAY: "soon" }, "OTEL_BSP_SCHEDULE_DELAY must be a positive integer, got 'soon'."],
  ])("refuses %j with one line naming the variable", (env, message) => {
    expect(() => loadTracingConfig(env)).toThrow(ConfigError);
    expect(() => loadTracingConfig(env)).toThrow(message);
  });

  it("is documented variable by variable in docs/tracing.md", () => {
    const page = readFileSync(new URL("../../docs/tracing.md", import.meta.url), "utf8");
    for (const name of Object.keys(tracingEnvSchema.entries)) expect(page).toContain(`\`${name}\``);
  });

  it("starts no SDK when off: the API's tracer makes spans that record nothing", async () => {
    expect(await startTracing(loadTracingConfig({}), { process: "api", replica: undefined, version: "test" })).toBe(false);
    const span = trace.getTracer("k8s-runner").startSpan("probe");
    expect(span.isRecording()).toBe(false);
    expect(span.spanContext().traceId).toBe("00000000000000000000000000000000");
    span.end();
  });
});
