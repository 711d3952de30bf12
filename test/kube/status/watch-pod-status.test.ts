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
    const deadline = pod({ phase: "Failed", reason: "DeadlineExceeded", message: "Pod was active on the node longer than the specified deadline" });
    expect(watchSessionEnd(deadline, false)).toEqual({ kind: "failed", message: "session pod reached Failed" });
    expect(watchSessionEnd(deadline, true)).toEqual({ kind: "stopped" });
    expect(watchSessionEnd(pod({ phase: "Succeeded" }), false)).toEqual({ kind: "failed", message: "session pod reached Succeeded" });
  });
});
