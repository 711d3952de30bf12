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
};

type AuditLine = { verb?: string; userAgent?: string; requestReceivedTimestamp?: string; objectRef?: { resource?: string; namespace?: string } };

/** The writes of audit `text` (JSON lines) received in [fromMs, toMs). */
export function countLeaseWrites(text: string, fromMs: number, toMs: number): LeaseWriteCount {
  const count: LeaseWriteCount = { runner: 0, byReplica: {}, all: 0, byVerb: {} };
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
  }
  return count;
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
