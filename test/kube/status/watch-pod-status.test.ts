import { describe, expect, it } from "vitest";
import { watchSessionEnd } from "../../../src/kube/status/watch-pod-status.ts";
import { containerStatus, pod, RUNNING, terminated } from "./pods.ts";

describe("watchSessionEnd", () => {
  it("is nothing while the pod runs, even with an app container ended", () => {
    const live = pod({
      phase: "Running",
      containerStatuses: [containerStatus("app-api", terminated(1, "Error")), containerStatus("workspace", RUNNING)],
    });
    expect(watchSessionEnd(live, false)).toBeUndefined();
  });

  it("fails the session when its pod finished, unless the user stopped it", () => {
    const ended = pod({ phase: "Failed", containerStatuses: [containerStatus("workspace", terminated(1, "Error"))] });
    expect(watchSessionEnd(ended, false)).toEqual({ kind: "failed", message: "session pod reached Failed" });
    expect(watchSessionEnd(ended, true)).toEqual({ kind: "stopped" });
    expect(watchSessionEnd(pod({ phase: "Succeeded" }), false)).toEqual({ kind: "failed", message: "session pod reached Succeeded" });
  });

  // The kubelet's SIGTERM ended every container: the deadline is the cause told, as for a run session.
  it("names the deadline when the kubelet ended the pod past it, and an eviction likewise", () => {
    const deadline = pod({
      phase: "Failed",
      reason: "DeadlineExceeded",
      message: "Pod was active on the node longer than the specified deadline",
      containerStatuses: [containerStatus("app-api", terminated(143, "Error")), containerStatus("workspace", terminated(143, "Error"))],
    });
    expect(watchSessionEnd(deadline, false)).toEqual({ kind: "failed", message: "Pod was active on the node longer than the specified deadline" });
    expect(watchSessionEnd(deadline, true)).toEqual({ kind: "stopped" });
    expect(watchSessionEnd(pod({ phase: "Failed", reason: "DeadlineExceeded" }), false)).toEqual({ kind: "failed", message: "DeadlineExceeded" });
    const evicted = pod({ phase: "Failed", reason: "Evicted", message: "The node was low on resource: memory." });
    expect(watchSessionEnd(evicted, false)).toEqual({ kind: "failed", message: "The node was low on resource: memory." });
  });
});
