import { describe, expect, it } from "vitest";
import { runtimeClassProbePod } from "../../../src/kube/specs/runtime-class-probe.ts";
import { violations } from "../fixtures.ts";

describe("runtimeClassProbePod", () => {
  it("names the RuntimeClass and passes the restricted profile, so only the class can refuse it", () => {
    const pod = runtimeClassProbePod("gvisor", "busybox:stable");
    expect(pod.spec?.runtimeClassName).toBe("gvisor");
    expect(violations("restricted", pod)).toEqual([]);
    // Requests and limits for the namespace quota.
    expect(pod.spec?.containers[0]?.resources).toEqual({ limits: { cpu: "50m", memory: "64Mi" }, requests: { cpu: "50m", memory: "64Mi" } });
  });
});
