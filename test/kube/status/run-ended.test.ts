import { describe, expect, it } from "vitest";
import { appRunEnds, runEndedReason, runSessionOutcome } from "../../../src/kube/status/run-ended.ts";
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

describe("runSessionOutcome", () => {
  const ended = (state: ReturnType<typeof terminated>, extra: { reason?: string; message?: string } = {}) =>
    pod({ phase: "Failed", ...extra, containerStatuses: [containerStatus("session", state)] });

  it("completes a run whose kernel exited by itself, with its code", () => {
    expect(runSessionOutcome({ kind: "exited", code: 0 }, undefined, "session")).toEqual({ code: 0 });
    expect(runSessionOutcome({ kind: "failed", message: "…" }, ended(terminated(3, "Error")), "session")).toEqual({ code: 3 });
  });

  it("fails a run the kubelet or the memory limit ended, a stopped one, and one whose pod went", () => {
    expect(runSessionOutcome({ kind: "failed", message: "…" }, ended(terminated(137, "OOMKilled")), "session")).toEqual({ reason: "application container OOMKilled (exit code 137)" });
    const past = ended(terminated(143, "Error"), { reason: "DeadlineExceeded", message: "Pod was active on the node longer than the specified deadline" });
    expect(runSessionOutcome({ kind: "failed", message: "…" }, past, "session")).toEqual({ reason: "application container DeadlineExceeded (exit code 143)" });
    expect(runSessionOutcome({ kind: "stopped" }, ended(terminated(143, "Error")), "session")).toEqual({ reason: "the session was stopped" });
    expect(runSessionOutcome({ kind: "failed", message: "pod disappeared" }, undefined, "session")).toEqual({ reason: "pod disappeared" });
  });
});
