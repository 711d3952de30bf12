/**
 * The writes the apiserver accepted or refused, as its audit says: on the simulated cluster its
 * write record (src/sim/audit.ts), on the real one the apiserver's audit log (test/cluster/). Each
 * with the client's User-Agent, by which runner replicas are told apart (they share a
 * ServiceAccount; src/replicas/identity.ts `replicaUserAgent`).
 */
import { readFile } from "node:fs/promises";
import * as v from "valibot";
import { inject } from "vitest";
import type { ClusterRunner, KubeRunner } from "./kube-runner.ts";

export type AuditedWrite = { verb: string; resource: string; namespace: string; name: string; userAgent: string; code: number; at: number };

const WRITE_VERBS = new Set(["create", "update", "patch", "delete", "deletecollection"]);

const AuditEventSchema = v.object({
  stage: v.string(),
  verb: v.string(),
  userAgent: v.optional(v.string(), ""),
  objectRef: v.optional(v.object({ resource: v.optional(v.string()), subresource: v.optional(v.string()), namespace: v.optional(v.string()), name: v.optional(v.string()) })),
  responseStatus: v.optional(v.object({ code: v.optional(v.number()) })),
  requestReceivedTimestamp: v.string(),
});

/** Every write of a main resource (no subresource) in `namespace`, in the order received. */
export async function auditedWrites(runner: ClusterRunner, namespace: string): Promise<AuditedWrite[]> {
  if ("sim" in runner) {
    return (runner as KubeRunner).sim
      .audit()
      .filter((write) => write.namespace === namespace && write.subresource === undefined)
      .map((write) => ({ verb: write.verb, resource: write.resource, namespace, name: write.name ?? "", userAgent: write.userAgent, code: write.code, at: write.at }));
  }
  const text = await readFile(inject("realCluster").auditLog, "utf8");
  const writes: AuditedWrite[] = [];
  for (const line of text.split("\n")) {
    if (line.trim() === "") continue;
    const parsed = v.safeParse(AuditEventSchema, JSON.parse(line));
    if (!parsed.success) continue;
    const { stage, verb, userAgent, objectRef, responseStatus, requestReceivedTimestamp } = parsed.output;
    if (stage !== "ResponseComplete" || !WRITE_VERBS.has(verb) || objectRef?.namespace !== namespace || objectRef.subresource !== undefined) continue;
    writes.push({ verb, resource: objectRef.resource ?? "", namespace, name: objectRef.name ?? "", userAgent, code: responseStatus?.code ?? 0, at: Date.parse(requestReceivedTimestamp) });
  }
  return writes;
}

/** The writes one replica made (by its User-Agent). */
export const byReplica = (writes: AuditedWrite[], identity: string) => writes.filter((write) => write.userAgent.endsWith(`(replica ${identity})`));

/** Whether the apiserver accepted the write. */
export const accepted = (write: AuditedWrite) => write.code >= 200 && write.code < 300;
