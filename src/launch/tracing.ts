/**
 * Tracing at a process's start (docs/tracing.md): nothing at all unless an exporter is
 * configured; then the SDK (tracing-sdk.ts), imported here on demand so that a runner without
 * one never loads it, and the OpenTelemetry API the code calls stays its no-op.
 */
import { hostname } from "node:os";
import type { TracingConfig } from "../config/tracing.ts";
import type { TracedProcess } from "./tracing-sdk.ts";

/** Spans still batched get this long to leave at exit; a receiver that is away must not hold the exit up. */
const FLUSH_BOUND_MS = 2_000;

let stopSdk: (() => Promise<void>) | undefined;

/**
 * Starts the SDK when `config` enables it. `replica`: RUNNER_REPLICA_ID, so that the spans of
 * each replica can be told apart (one replica: the host name).
 */
export async function startTracing(config: TracingConfig, who: { process: TracedProcess["process"]; replica: string | undefined; version: string }): Promise<boolean> {
  if (!config.enabled || stopSdk) return false;
  const { startTracingSdk } = await import("./tracing-sdk.ts");
  stopSdk = startTracingSdk(config, { ...who, instance: `${who.replica ?? `${hostname()}-${process.pid}`}/${who.process}` });
  return true;
}

/** Sends what spans are batched, within a bound; before a graceful exit. Nothing when tracing is off. */
export async function flushTracing(): Promise<void> {
  const stop = stopSdk;
  if (!stop) return;
  stopSdk = undefined;
  let timer: NodeJS.Timeout | undefined;
  await Promise.race([stop().catch(() => undefined), new Promise((resolve) => (timer = setTimeout(resolve, FLUSH_BOUND_MS)))]);
  clearTimeout(timer);
}
