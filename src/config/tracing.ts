/**
 * Tracing's configuration (docs/tracing.md): the OpenTelemetry SDK's standard `OTEL_*`
 * variables, the subset this runner honours, read by both processes. Off unless an exporter is
 * configured: `OTEL_TRACES_EXPORTER=otlp` (or `console`), or an OTLP endpoint; the SDK's own
 * default of `otlp` to localhost would make every runner without a collector retry exports for
 * ever. A bad value refuses startup like any other variable.
 */
import * as v from "valibot";
import { ConfigError, booleanVar, parseEnv, picklistVar, positiveIntVar, stringVar } from "./env-values.ts";

const PROTOCOLS = ["http/protobuf", "http/json", "grpc"] as const;
const SAMPLERS = ["always_on", "always_off", "traceidratio", "parentbased_always_on", "parentbased_always_off", "parentbased_traceidratio"] as const;

export const tracingEnvSchema = v.object({
  OTEL_SDK_DISABLED: booleanVar("OTEL_SDK_DISABLED", false),
  OTEL_TRACES_EXPORTER: stringVar(undefined),
  OTEL_EXPORTER_OTLP_ENDPOINT: stringVar(undefined),
  OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: stringVar(undefined),
  OTEL_EXPORTER_OTLP_PROTOCOL: picklistVar("OTEL_EXPORTER_OTLP_PROTOCOL", PROTOCOLS, "http/protobuf"),
  OTEL_EXPORTER_OTLP_TRACES_PROTOCOL: stringVar(undefined),
  OTEL_EXPORTER_OTLP_HEADERS: stringVar(undefined),
  OTEL_EXPORTER_OTLP_TRACES_HEADERS: stringVar(undefined),
  OTEL_EXPORTER_OTLP_TIMEOUT: positiveIntVar("OTEL_EXPORTER_OTLP_TIMEOUT", 10_000),
  OTEL_EXPORTER_OTLP_TRACES_TIMEOUT: positiveIntVar("OTEL_EXPORTER_OTLP_TRACES_TIMEOUT", undefined),
  OTEL_SERVICE_NAME: stringVar(undefined),
  OTEL_RESOURCE_ATTRIBUTES: stringVar(undefined),
  OTEL_TRACES_SAMPLER: picklistVar("OTEL_TRACES_SAMPLER", SAMPLERS, "parentbased_always_on"),
  OTEL_TRACES_SAMPLER_ARG: stringVar(undefined),
  OTEL_BSP_SCHEDULE_DELAY: positiveIntVar("OTEL_BSP_SCHEDULE_DELAY", 5_000),
});

export type OtlpProtocol = "http/protobuf" | "http/json";
export type TraceSampler = (typeof SAMPLERS)[number];

export type TracingConfig =
  | { enabled: false }
  | {
      enabled: true;
      exporter: { kind: "otlp"; url: string; protocol: OtlpProtocol; headers: Record<string, string>; timeoutMs: number } | { kind: "console" };
      /** OTEL_SERVICE_NAME; unset: each process names itself (k8s-runner-api, k8s-runner-supervisor). */
      serviceName: string | undefined;
      resourceAttributes: Record<string, string>;
      sampler: TraceSampler;
      ratio: number;
      scheduleDelayMs: number;
    };

/** `key=value,…` with percent-encoded values (the W3C Baggage form both variables use). */
function keyValues(name: string, raw: string | undefined): Record<string, string> {
  const pairs: Record<string, string> = {};
  for (const item of (raw ?? "").split(",")) {
    if (item.trim() === "") continue;
    const at = item.indexOf("=");
    const key = at > 0 ? item.slice(0, at).trim() : "";
    if (key === "") throw new ConfigError(`${name} must be a comma list of key=value, got '${item.trim()}'.`);
    try {
      pairs[key] = decodeURIComponent(item.slice(at + 1).trim());
    } catch {
      throw new ConfigError(`${name}: the value of '${key}' is not valid percent-encoding.`);
    }
  }
  return pairs;
}

function httpUrl(name: string, raw: string): string {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new ConfigError(`${name} must be an http(s) URL, got '${raw}'.`);
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") throw new ConfigError(`${name} must be an http(s) URL, got '${raw}'.`);
  return raw;
}

/** The traces URL: the signal's own endpoint as given, else the base endpoint with `/v1/traces`. */
function tracesUrl(vars: v.InferOutput<typeof tracingEnvSchema>): string {
  if (vars.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT !== undefined) return httpUrl("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", vars.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT);
  const base = httpUrl("OTEL_EXPORTER_OTLP_ENDPOINT", vars.OTEL_EXPORTER_OTLP_ENDPOINT ?? "http://localhost:4318");
  return `${base.replace(/\/+$/, "")}/v1/traces`;
}

function protocolOf(vars: v.InferOutput<typeof tracingEnvSchema>): OtlpProtocol {
  const own = vars.OTEL_EXPORTER_OTLP_TRACES_PROTOCOL?.toLowerCase();
  const [name, protocol] = own !== undefined ? ["OTEL_EXPORTER_OTLP_TRACES_PROTOCOL", own] : ["OTEL_EXPORTER_OTLP_PROTOCOL", vars.OTEL_EXPORTER_OTLP_PROTOCOL];
  if (protocol === "http/protobuf" || protocol === "http/json") return protocol;
  throw new ConfigError(`${name} must be http/protobuf or http/json (OTLP over HTTP, port 4318; this runner does not speak grpc), got '${protocol}'.`);
}

/** Which exporter, if any: the variable's choice, else OTLP when an endpoint names a receiver. */
function exporterKind(vars: v.InferOutput<typeof tracingEnvSchema>): "otlp" | "console" | undefined {
  const chosen = vars.OTEL_TRACES_EXPORTER?.toLowerCase();
  if (chosen === undefined) return vars.OTEL_EXPORTER_OTLP_ENDPOINT !== undefined || vars.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT !== undefined ? "otlp" : undefined;
  if (chosen === "none") return undefined;
  if (chosen === "otlp" || chosen === "console") return chosen;
  throw new ConfigError(`OTEL_TRACES_EXPORTER must be one of otlp, console, none, got '${vars.OTEL_TRACES_EXPORTER}'.`);
}

function samplerRatio(vars: v.InferOutput<typeof tracingEnvSchema>): number {
  const raw = vars.OTEL_TRACES_SAMPLER_ARG;
  if (raw === undefined || !vars.OTEL_TRACES_SAMPLER.endsWith("traceidratio")) return 1;
  const ratio = /^\d*\.?\d+$/.test(raw) ? Number(raw) : NaN;
  if (!(ratio >= 0 && ratio <= 1)) throw new ConfigError(`OTEL_TRACES_SAMPLER_ARG must be a ratio in 0..1 for ${vars.OTEL_TRACES_SAMPLER}, got '${raw}'.`);
  return ratio;
}

export function loadTracingConfig(env: NodeJS.ProcessEnv): TracingConfig {
  const vars = parseEnv(tracingEnvSchema, env);
  const kind = exporterKind(vars);
  if (vars.OTEL_SDK_DISABLED || kind === undefined) return { enabled: false };
  const exporter =
    kind === "console"
      ? ({ kind } as const)
      : {
          kind,
          url: tracesUrl(vars),
          protocol: protocolOf(vars),
          headers: { ...keyValues("OTEL_EXPORTER_OTLP_HEADERS", vars.OTEL_EXPORTER_OTLP_HEADERS), ...keyValues("OTEL_EXPORTER_OTLP_TRACES_HEADERS", vars.OTEL_EXPORTER_OTLP_TRACES_HEADERS) },
          timeoutMs: vars.OTEL_EXPORTER_OTLP_TRACES_TIMEOUT ?? vars.OTEL_EXPORTER_OTLP_TIMEOUT,
        };
  return {
    enabled: true,
    exporter,
    serviceName: vars.OTEL_SERVICE_NAME,
    resourceAttributes: keyValues("OTEL_RESOURCE_ATTRIBUTES", vars.OTEL_RESOURCE_ATTRIBUTES),
    sampler: vars.OTEL_TRACES_SAMPLER,
    ratio: samplerRatio(vars),
    scheduleDelayMs: vars.OTEL_BSP_SCHEDULE_DELAY,
  };
}
