/**
 * Whether RUNNER_RUNTIME_CLASS names a RuntimeClass the cluster has: the
 * apiserver's RuntimeClass admission refuses every pod that names a missing one (403 `pod
 * rejected: RuntimeClass "<name>" not found`), so it is found at boot and in `/v1/probe` by a
 * dry-run pod create instead. The dry run needs only the `create pods` the runner already has
 * (reading the cluster-scoped RuntimeClass would need a ClusterRole). Only that refusal counts as
 * missing; any other answer (a quota or Pod Security refusal of the probe pod, an unreachable
 * API) cannot tell and is not held against the runner.
 */
import type { AvailabilityReport } from "../../contract/wire.ts";
import { httpStatusOf, statusBodyOf } from "./api-error.ts";

export type RuntimeClassVerdict = "present" | "missing" | "unknown";

/** The verdict of a dry-run create of a pod naming `name`: `error` undefined means it was admitted. */
export function runtimeClassVerdict(name: string, error: unknown): RuntimeClassVerdict {
  if (error === undefined) return "present";
  const message = statusBodyOf(error)?.message;
  const refused = httpStatusOf(error) === 403 && typeof message === "string" && message.includes(`RuntimeClass "${name}" not found`);
  return refused ? "missing" : "unknown";
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
