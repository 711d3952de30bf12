/**
 * The Prometheus registry of this process. Every figure is labelled `process` ("api" or
 * "supervisor"); the supervisor hands its figures to the api process over the internal socket
 * as prom-client JSON, and the api serves both processes' at `GET /metrics` as one exposition.
 */
import { AggregatorRegistry, Registry, collectDefaultMetrics } from "prom-client";
import * as v from "valibot";
import { MetricsSnapshotSchema } from "../contract/responses.ts";

export type ProcessName = "api" | "supervisor";

export type MetricsSnapshot = v.InferOutput<typeof MetricsSnapshotSchema>;

export const registry = new Registry();
let named = false;

/**
 * Names this process in every figure and starts the default ones (memory, CPU, event loop,
 * handles). Once per process: the first server started in it names it.
 */
export function startProcessMetrics(name: ProcessName): void {
  if (named) return;
  named = true;
  registry.setDefaultLabels({ process: name });
  collectDefaultMetrics({ register: registry });
}

export async function metricsSnapshot(): Promise<MetricsSnapshot> {
  return v.parse(MetricsSnapshotSchema, await registry.getMetricsAsJSON());
}

/**
 * One exposition of several processes' snapshots. Their series differ by the `process` label,
 * so the aggregation only groups each family's series under one HELP/TYPE: every series is
 * summed with nothing but itself (prom-client's per-metric aggregators would otherwise drop
 * or average some default figures).
 */
export async function renderExposition(snapshots: MetricsSnapshot[]): Promise<{ contentType: string; text: string }> {
  const summed = snapshots.map((snapshot) => snapshot.map((metric) => ({ ...metric, aggregator: "sum" as const })));
  // aggregate() reads only the fields the schema holds; its type names a live metric's methods too.
  const merged = AggregatorRegistry.aggregate(summed as unknown as Parameters<typeof AggregatorRegistry.aggregate>[0]);
  return { contentType: merged.contentType, text: await merged.metrics() };
}
