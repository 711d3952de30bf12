/**
 * `probe()` answers (docs/kubernetes.md "Probe"): the session namespace readable → ready; otherwise a
 * namespace list tells an unreachable API from a missing namespace. (A namespace read refused
 * by RBAC while the list is allowed reads as missing: a known ambiguity.)
 */
import type { AvailabilityReport } from "../../contract/wire.ts";

export const PROBE_READY: AvailabilityReport = { status: "ready" };

export const PROBE_API_UNREACHABLE: AvailabilityReport = {
  status: "unavailable",
  message: "Kubernetes API server not reachable from the runner.",
  remediation: "Check the runner's in-cluster ServiceAccount and RBAC.",
};

export function probeNamespaceMissing(namespace: string): AvailabilityReport {
  return {
    status: "unavailable",
    message: `Session namespace '${namespace}' does not exist.`,
    // The reference pointed at its Helm chart; this runner installs from its kustomize manifests.
    remediation: `Apply the runner's manifests (kubectl apply -k k8s/...), which create the '${namespace}' namespace.`,
  };
}
