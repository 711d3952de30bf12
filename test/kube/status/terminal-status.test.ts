import { describe, expect, it } from "vitest";
import { podFailureMessage, terminalStatus, truncateDetail } from "../../../src/kube/status/terminal-status.ts";
import { containerStatus, pod, RUNNING, terminated, waiting } from "./pods.ts";

describe("terminalStatus", () => {
  it("is `stopped` after a user stop, whatever the pod reports", () => {
    const failed = pod({ phase: "Failed", containerStatuses: [containerStatus("session", terminated(137, "Error"))] });
    expect(terminalStatus(failed, true)).toEqual({ kind: "stopped" });
  });

  it("is `exited` with the session container's exit code when the pod Succeeded", () => {
    const succeeded = pod({ phase: "Succeeded", containerStatuses: [containerStatus("session", terminated(0, "Completed"))] });
    expect(terminalStatus(succeeded, false)).toEqual({ kind: "exited", code: 0 });
  });

  it("is `exited` 0 when the Succeeded pod shows no exit code", () => {
    expect(terminalStatus(pod({ phase: "Succeeded" }), false)).toEqual({ kind: "exited", code: 0 });
  });

  it("is `failed` with the failure message otherwise", () => {
    const oom = pod({
      phase: "Failed",
      initContainerStatuses: [containerStatus("body-fetch", terminated(0, "Completed"))],
      containerStatuses: [containerStatus("session", terminated(137, "OOMKilled"))],
    });
    expect(terminalStatus(oom, false)).toEqual({ kind: "failed", message: 'container "session" failed: OOMKilled (exit code 137)' });
  });
});

describe("podFailureMessage", () => {
  it("names a failed init container with its reason, code and message", () => {
    expect(
      podFailureMessage(
        pod({
          phase: "Failed",
          initContainerStatuses: [containerStatus("body-fetch", terminated(1, "Error", "wget: download timed out\n"))],
          containerStatuses: [containerStatus("session", waiting("PodInitializing"))],
        }),
      ),
    ).toBe('init container "body-fetch" failed: Error (exit code 1): wget: download timed out');
  });

  it("names an init container stuck on its image", () => {
    expect(
      podFailureMessage(
        pod({
          phase: "Pending",
          initContainerStatuses: [containerStatus("body-fetch", waiting("ImagePullBackOff", "Back-off pulling image"))],
          containerStatuses: [containerStatus("session", waiting("PodInitializing"))],
        }),
      ),
    ).toBe('init container "body-fetch" waiting: ImagePullBackOff: Back-off pulling image');
  });

  it("reads the last state when the current one says nothing", () => {
    expect(
      podFailureMessage(
        pod({
          phase: "Running",
          containerStatuses: [containerStatus("session", RUNNING, { lastState: terminated(2, "Error"), restartCount: 1 })],
        }),
      ),
    ).toBe('container "session" failed: Error (exit code 2)');
  });

  it("ignores benign waits and a zero exit, falling back to the pod message", () => {
    expect(
      podFailureMessage(
        pod({
          phase: "Failed",
          reason: "DeadlineExceeded",
          message: "Pod was active on the node longer than the specified deadline",
          initContainerStatuses: [containerStatus("body-fetch", terminated(0, "Completed"))],
          containerStatuses: [containerStatus("session", waiting("ContainerCreating"))],
        }),
      ),
    ).toBe("Pod was active on the node longer than the specified deadline");
  });

  // What a real kubelet reports past activeDeadlineSeconds: its SIGTERM ended the container.
  it("gives the kubelet's account when it ended the containers itself, not their exits", () => {
    const deadline = pod({
      phase: "Failed",
      reason: "DeadlineExceeded",
      message: "Pod was active on the node longer than the specified deadline",
      initContainerStatuses: [containerStatus("body-fetch", terminated(0, "Completed"))],
      containerStatuses: [containerStatus("session", terminated(143, "Error"))],
    });
    expect(podFailureMessage(deadline)).toBe("Pod was active on the node longer than the specified deadline");
    expect(terminalStatus(deadline, false)).toEqual({ kind: "failed", message: "Pod was active on the node longer than the specified deadline" });
    const evicted = pod({
      phase: "Failed",
      reason: "Evicted",
      message: "The node was low on resource: memory.",
      containerStatuses: [containerStatus("session", terminated(137, "Error"))],
    });
    expect(podFailureMessage(evicted)).toBe("The node was low on resource: memory.");
    expect(podFailureMessage(pod({ phase: "Failed", reason: "DeadlineExceeded", containerStatuses: [containerStatus("session", terminated(143, "Error"))] }))).toBe(
      "DeadlineExceeded",
    );
  });

  it("falls back to the pod reason, then to `pod failed`", () => {
    expect(podFailureMessage(pod({ phase: "Failed", reason: "Evicted" }))).toBe("Evicted");
    expect(podFailureMessage(pod({ phase: "Failed" }))).toBe("pod failed");
  });

  it("shows `unknown` for a termination without an exit code and omits a missing reason", () => {
    const noCode = pod({
      phase: "Failed",
      containerStatuses: [
        containerStatus("session", { terminated: { exitCode: undefined as unknown as number, reason: "ContainerStatusUnknown" } }),
      ],
    });
    expect(podFailureMessage(noCode)).toBe('container "session" failed: ContainerStatusUnknown (exit code unknown)');
    const noReason = pod({ phase: "Failed", containerStatuses: [containerStatus("session", terminated(3))] });
    expect(podFailureMessage(noReason)).toBe('container "session" failed: (exit code 3)');
  });

  it("truncates a long detail at 500 characters", () => {
    const long = "x".repeat(600);
    const failed = pod({ phase: "Failed", containerStatuses: [containerStatus("session", terminated(1, "Error", `  ${long}  `))] });
    expect(podFailureMessage(failed)).toBe(`container "session" failed: Error (exit code 1): ${"x".repeat(500)}…`);
    expect(podFailureMessage(pod({ phase: "Failed", message: long }))).toBe(`${"x".repeat(500)}…`);
    expect(truncateDetail(` ${"y".repeat(500)} `)).toBe("y".repeat(500));
  });
});
