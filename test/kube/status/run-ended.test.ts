import { describe, expect, it } from "vitest";
import { appRunEnds, runEndedReason } from "../../../src/kube/status/run-ended.ts";
import { containerStatus, pod, RUNNING, terminated } from "./pods.ts";

describe("runEndedReason", () => {
  it("says how an app container ended", () => {
    expect(runEndedReason(terminated(137, "OOMKilled").terminated!)).toBe("application container OOMKilled (exit code 137)");
    expect(runEndedReason(terminated(1, "Error").terminated!)).toBe("application container Error (exit code 1)");
    expect(runEndedReason(terminated(0, "Completed").terminated!)).toBe("application container exited (code 0)");
    expect(runEndedReason(terminated(4).terminated!)).toBe("application container exited (code 4)");
  });
});

describe("appRunEnds", () => {
  it("lists terminated app containers only, never workspace or agent", () => {
    const watchPod = pod({
      phase: "Running",
      containerStatuses: [
        containerStatus("agent", terminated(1, "Error")),
        containerStatus("app-api", terminated(1, "Error")),
        containerStatus("app-worker", RUNNING),
        containerStatus("workspace", RUNNING),
      ],
    });
    expect(appRunEnds(watchPod)).toEqual([{ app: "api", reason: "application container Error (exit code 1)" }]);
  });

  it("names the pod's deadline for an app the kubelet ended past it, with the container's own exit", () => {
    const past = pod({
      phase: "Failed",
      reason: "DeadlineExceeded",
      message: "Pod was active on the node longer than the specified deadline",
      containerStatuses: [containerStatus("app-api", terminated(143, "Error")), containerStatus("workspace", terminated(143, "Error"))],
    });
    expect(appRunEnds(past)).toEqual([{ app: "api", reason: "application container DeadlineExceeded (exit code 143)" }]);
  });
});
