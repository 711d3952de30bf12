import { describe, expect, it } from "vitest";
import { AvailabilityReportSchema } from "../../../src/contract/wire.ts";
import * as v from "valibot";
import { PROBE_API_UNREACHABLE, PROBE_READY, probeNamespaceMissing } from "../../../src/kube/status/probe.ts";

describe("probe reports", () => {
  it("are availability reports of the contract", () => {
    for (const report of [PROBE_READY, PROBE_API_UNREACHABLE, probeNamespaceMissing("telo-sessions")]) {
      expect(v.is(AvailabilityReportSchema, report)).toBe(true);
    }
  });

  it("tell an unreachable API from a missing namespace", () => {
    expect(PROBE_API_UNREACHABLE).toEqual({
      status: "unavailable",
      message: "Kubernetes API server not reachable from the runner.",
      remediation: "Check the runner's in-cluster ServiceAccount and RBAC.",
    });
    expect(probeNamespaceMissing("telo-sessions")).toEqual({
      status: "unavailable",
      message: "Session namespace 'telo-sessions' does not exist.",
      remediation: "Apply the runner's manifests (kubectl apply -k k8s/...), which create the 'telo-sessions' namespace.",
    });
  });
});
