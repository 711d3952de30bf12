import { describe, expect, it } from "vitest";
import { pullTrouble } from "../../../src/kube/status/waiting.ts";
import { containerStatus, pod, RUNNING, waiting } from "./pods.ts";

describe("pullTrouble", () => {
  it("gives the kubelet's reason and message for a pull failing or backing off", () => {
    const failing = pod({ phase: "Pending", containerStatuses: [containerStatus("session", waiting("ErrImagePull", "rpc error: not found"))] });
    expect(pullTrouble(failing)).toBe("session: ErrImagePull: rpc error: not found");
    const backingOff = pod({
      phase: "Pending",
      initContainerStatuses: [containerStatus("body-fetch", waiting("ImagePullBackOff", 'Back-off pulling image "busybox:stable"'))],
    });
    expect(pullTrouble(backingOff)).toBe('body-fetch: ImagePullBackOff: Back-off pulling image "busybox:stable"');
  });

  it("is nothing for other waits and outside Pending", () => {
    expect(pullTrouble(pod({ phase: "Pending", containerStatuses: [containerStatus("session", waiting("ContainerCreating"))] }))).toBeUndefined();
    expect(pullTrouble(pod({ phase: "Running", containerStatuses: [containerStatus("session", RUNNING)] }))).toBeUndefined();
  });
});
