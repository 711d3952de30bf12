/**
 * Whether RUNNER_RUNTIME_CLASS names a RuntimeClass the cluster has (issue 9 bug 4): the
 * apiserver refuses every pod that names a missing one (403), so it is found at boot and in
 * `/v1/probe` instead. Only a NotFound for that very name counts as missing: a 404 for the
 * resource itself (a cluster that does not serve node.k8s.io) or a refused read (the runner's
 * RBAC need not cover cluster-scoped objects) cannot tell, and is not held against the runner.
 */
import type { AvailabilityReport } from "../../contract/wire.ts";
import { httpStatusOf, statusBodyOf } from "./api-error.ts";

export type RuntimeClassVerdict = "present" | "missing" | "unknown";

/** The verdict of reading `runtimeclasses/<name>`: `error` undefined means the read succeeded. */
export function runtimeClassVerdict(name: string, error: unknown): RuntimeClassVerdict {
  if (error === undefined) return "present";
  if (httpStatusOf(error) !== 404) return "unknown";
  const details = statusBodyOf(error)?.details;
  const named = details !== null && typeof details === "object" ? (details as Record<string, unknown>) : {};
  return named.kind === "runtimeclasses" && named.name === name ? "missing" : "unknown";
}

export function runtimeClassMissingMessage(name: string): string {
  return `RuntimeClass '${name}' (RUNNER_RUNTIME_CLASS) does not exist in the cluster, so every session pod would be refused.`;
}

export function probeRuntimeClassMissing(name: string): AvailabilityReport {
  return {
    status: "unavailable",
    message: runtimeClassMissingMessage(name),
    remediation: `Create the RuntimeClass '${name}' (and install its runtime on the nodes), or unset RUNNER_RUNTIME_CLASS.`,
  };
}
