import { describe, expect, it } from "vitest";
import { provisionMessage } from "../../../src/kube/status/provision.ts";
import { containerStatus, pod, RUNNING, waiting } from "./pods.ts";

describe("provisionMessage", () => {
  it("is `Scheduling` for a Pending pod not yet on a node", () => {
    expect(
      provisionMessage(
        pod({
          phase: "Pending",
          conditions: [{ type: "PodScheduled", status: "False", reason: "Unschedulable", message: "0/3 nodes are available" }],
        }),
      ),
    ).toBe("Scheduling");
  });

  it("says the application is being delivered while body-fetch runs", () => {
    expect(
      provisionMessage(
        pod({
          phase: "Pending",
          initContainerStatuses: [containerStatus("body-fetch", RUNNING)],
          containerStatuses: [containerStatus("session", waiting("PodInitializing"))],
        }),
      ),
    ).toBe("Delivering application");
  });

  it("prefers an init container's waiting reason, humanised", () => {
    expect(
      provisionMessage(
        pod({
          phase: "Pending",
          initContainerStatuses: [containerStatus("body-fetch", waiting("ImagePullBackOff", 'Back-off pulling image "busybox:stable"'))],
          containerStatuses: [containerStatus("session", waiting("PodInitializing"))],
        }),
      ),
    ).toBe("Pulling image");
  });

  it("humanises each known wait and passes others through verbatim", () => {
    const messageFor = (reason: string) =>
      provisionMessage(pod({ phase: "Pending", containerStatuses: [containerStatus("session", waiting(reason))] }));
    expect(messageFor("ContainerCreating")).toBe("Creating container");
    expect(messageFor("ErrImagePull")).toBe("Pulling image");
    expect(messageFor("ImagePullBackOff")).toBe("Pulling image");
    expect(messageFor("CreateContainerConfigError")).toBe("CreateContainerConfigError");
  });

  it("says nothing outside Pending", () => {
    expect(provisionMessage(pod({ phase: "Running", containerStatuses: [containerStatus("session", RUNNING)] }))).toBeUndefined();
    expect(provisionMessage(pod({}))).toBeUndefined();
  });
});
