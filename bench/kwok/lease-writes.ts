/**
 * Lease writes, counted two ways over one interval: from the apiserver's audit log (which holds
 * Lease writes only, control-plane.ts), by namespace and by the replica named in the writer's
 * User-Agent (`telo-k8s-runner/<version> (replica <identity>)`, src/replicas/identity.ts); and
 * from the apiserver's own `apiserver_request_total{resource="leases"}`, every writer together.
 * Pure functions of the texts read.
 */
import { readFile } from "node:fs/promises";
import { parseExposition, valueOf } from "../../test/support/metrics.ts";
import { SESSION_NAMESPACE } from "../support/runner.ts";

const WRITE_VERBS = new Set(["create", "update", "patch", "delete"]);
/** The same writes as the apiserver's request metric spells their verbs. */
const METRIC_WRITE_VERBS = ["POST", "PUT", "PATCH", "DELETE"];

export type LeaseWriteCount = {
  /** Writes to Leases of the session namespace (the runner's: member, shard and duties Leases). */
  runner: number;
  /** Of those, by replica identity. */
  byReplica: Record<string, number>;
  /** Lease writes in any namespace (the apiserver's own identity Lease among them). */
  all: number;
  /** Of the runner's, by verb (create/update/delete); an update is a renew, a take or a release. */
  byVerb: Record<string, number>;
  /**
   * Per replica, the longest time between two of its Lease writes in the interval (from its
   * start, to its end): a replica fences itself once its last renew is older than the renew
   * deadline (10 s at the default timing), so a gap near that says its renewals fell behind.
   */
  longestGapMs: Record<string, number>;
  /** The runner's writes' time in the apiserver (received to answered), p99 and maximum, ms. */
  latencyMs: { p99: number; max: number };
};

type AuditLine = {
  verb?: string;
  userAgent?: string;
  requestReceivedTimestamp?: string;
  stageTimestamp?: string;
  objectRef?: { resource?: string; namespace?: string };
};

/** The longest gap of each replica's ascending write times within [fromMs, toMs]. */
function longestGaps(times: Record<string, number[]>, fromMs: number, toMs: number): Record<string, number> {
  return Object.fromEntries(
    Object.entries(times).map(([replica, at]) => {
      const edges = [fromMs, ...at.sort((a, b) => a - b), toMs];
      return [replica, Math.max(...edges.slice(1).map((t, i) => t - edges[i]!))];
    }),
  );
}

function p99AndMax(values: number[]): { p99: number; max: number } {
  const sorted = [...values].sort((a, b) => a - b);
  return { p99: sorted[Math.max(0, Math.ceil(sorted.length * 0.99) - 1)] ?? Number.NaN, max: sorted.at(-1) ?? Number.NaN };
}

/** The writes of audit `text` (JSON lines) received in [fromMs, toMs). */
export function countLeaseWrites(text: string, fromMs: number, toMs: number): LeaseWriteCount {
  const count: Omit<LeaseWriteCount, "longestGapMs" | "latencyMs"> = { runner: 0, byReplica: {}, all: 0, byVerb: {} };
  const times: Record<string, number[]> = {};
  const latencies: number[] = [];
  for (const line of text.split("\n")) {
    if (line === "") continue;
    const event = JSON.parse(line) as AuditLine;
    if (event.objectRef?.resource !== "leases" || !WRITE_VERBS.has(event.verb ?? "")) continue;
    const at = Date.parse(event.requestReceivedTimestamp ?? "");
    if (!(at >= fromMs && at < toMs)) continue;
    count.all += 1;
    if (event.objectRef.namespace !== SESSION_NAMESPACE) continue;
    count.runner += 1;
    count.byVerb[event.verb!] = (count.byVerb[event.verb!] ?? 0) + 1;
    const replica = /\(replica ([^)]+)\)/.exec(event.userAgent ?? "")?.[1] ?? "unknown";
    count.byReplica[replica] = (count.byReplica[replica] ?? 0) + 1;
    (times[replica] ??= []).push(at);
    const answered = Date.parse(event.stageTimestamp ?? "");
    if (Number.isFinite(answered)) latencies.push(answered - at);
  }
  return { ...count, longestGapMs: longestGaps(times, fromMs, toMs), latencyMs: p99AndMax(latencies) };
}

export async function leaseWritesFromAudit(auditLog: string, fromMs: number, toMs: number): Promise<LeaseWriteCount> {
  return countLeaseWrites(await readFile(auditLog, "utf8").catch(() => ""), fromMs, toMs);
}

/** Only the families asked for: the apiserver's whole exposition is large and not all of it parses as plain samples. */
function samplesOf(text: string, family: string) {
  return parseExposition(text.split("\n").filter((line) => line.startsWith(`${family}{`)).join("\n"));
}

/** Lease writes the apiserver has answered so far, every writer together. */
export function leaseWritesFromMetrics(text: string): number {
  const samples = samplesOf(text, "apiserver_request_total");
  return METRIC_WRITE_VERBS.reduce((sum, verb) => sum + valueOf(samples, "apiserver_request_total", { resource: "leases", verb }), 0);
}

/** Requests the apiserver has answered for a pod subresource (`attach`, `log`) so far. */
export function podSubresourceRequests(text: string, subresource: string): number {
  return valueOf(samplesOf(text, "apiserver_request_total"), "apiserver_request_total", { resource: "pods", subresource });
}
