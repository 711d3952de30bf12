import { describe, expect, it } from "vitest";
import { bringUpState, watchSessionEnd } from "../../../src/kube/status/watch-pod-status.ts";
import { containerStatus, pod, RUNNING, terminated, waiting } from "./pods.ts";

describe("bringUpState", () => {
  it("waits with the provision message while Pending", () => {
    expect(
      bringUpState(pod({ phase: "Pending", containerStatuses: [containerStatus("workspace", waiting("ContainerCreating"))] })),
    ).toEqual({ kind: "waiting", provision: "Creating container" });
  });

  it("keeps waiting while Running without an IP, and goes on once it has one", () => {
    const running = { phase: "Running", containerStatuses: [containerStatus("workspace", RUNNING)] };
    expect(bringUpState(pod(running))).toEqual({ kind: "waiting", provision: undefined });
    expect(bringUpState(pod({ ...running, podIP: "10.244.0.17", podIPs: [{ ip: "10.244.0.17" }] }))).toEqual({
      kind: "running",
      podIP: "10.244.0.17",
    });
  });

  it("fails when the pod finished or vanished before serving", () => {
    expect(bringUpState(pod({ phase: "Failed", reason: "Evicted" }))).toEqual({ kind: "failed", message: "pod reached Failed before serving" });
    expect(bringUpState(pod({ phase: "Succeeded" }))).toEqual({ kind: "failed", message: "pod reached Succeeded before serving" });
    expect(bringUpState(undefined)).toEqual({ kind: "failed", message: "pod disappeared before reaching Running" });
  });
});

describe("watchSessionEnd", () => {
  it("is nothing while the pod runs, even with an app container ended", () => {
    const live = pod({
      phase: "Running",
      containerStatuses: [containerStatus("app-api", terminated(1, "Error")), containerStatus("workspace", RUNNING)],
    });
    expect(watchSessionEnd(live, false)).toBeUndefined();
  });

  it("fails the session when its pod finished, unless the user stopped it", () => {
    const deadline = pod({ phase: "Failed", reason: "DeadlineExceeded", message: "Pod was active on the node longer than the specified deadline" });
    expect(watchSessionEnd(deadline, false)).toEqual({ kind: "failed", message: "session pod reached Failed" });
    expect(watchSessionEnd(deadline, true)).toEqual({ kind: "stopped" });
    expect(watchSessionEnd(pod({ phase: "Succeeded" }), false)).toEqual({ kind: "failed", message: "session pod reached Succeeded" });
  });
});
