import { describe, expect, it } from "vitest";
import { podStages } from "../../../src/kube/status/pod-stages.ts";
import { containerStatus, FINISHED_AT, pod, RUNNING, STARTED_AT, terminated, waiting } from "./pods.ts";

const SCHEDULED_AT = "2026-11-29T16:30:01.000Z";
const scheduled = { type: "PodScheduled", status: "True", lastTransitionTime: new Date(SCHEDULED_AT) };
const LATER = Date.parse("2026-11-29T16:31:00Z");

describe("podStages", () => {
  it("reads nothing from a pod the scheduler has not placed", () => {
    expect(podStages(pod({ phase: "Pending", conditions: [{ type: "PodScheduled", status: "False", reason: "Unschedulable" }] }), "session", LATER)).toEqual([]);
  });

  it("dates scheduling, the bundle's delivery and the container's start by the pod's own status", () => {
    const running = {
      ...pod({
        phase: "Running",
        conditions: [scheduled],
        initContainerStatuses: [containerStatus("body-fetch", terminated(0, "Completed"))],
        containerStatuses: [containerStatus("session", RUNNING, { imageID: "docker.io/telorun/node@sha256:ab" })],
      }),
      spec: { nodeName: "node-a", initContainers: [{ name: "body-fetch" }], containers: [{ name: "session" }] },
    };
    expect(podStages(running, "session", LATER)).toEqual([
      { stage: "scheduled", at: SCHEDULED_AT, detail: "on node-a" },
      { stage: "bundle-delivered", at: FINISHED_AT.toISOString() },
      // The pull is dated no later than the start that needed it.
      { stage: "image-pulled", at: STARTED_AT.toISOString(), detail: "telorun/node:0.14.0-slim" },
      { stage: "container-started", at: STARTED_AT.toISOString() },
    ]);
  });

  it("dates a pull by the read that shows the image on the node, before the container starts", () => {
    const creating = pod({
      phase: "Pending",
      conditions: [scheduled],
      containerStatuses: [containerStatus("session", waiting("ContainerCreating"), { imageID: "docker.io/telorun/node@sha256:ab" })],
    });
    expect(podStages(creating, "session", LATER)).toContainEqual({ stage: "image-pulled", at: new Date(LATER).toISOString(), detail: "telorun/node:0.14.0-slim" });
  });

  it("does not count a failed or unfinished fetch as the bundle delivered, nor a pull in trouble as pulled", () => {
    const failedFetch = pod({
      phase: "Pending",
      conditions: [scheduled],
      initContainerStatuses: [containerStatus("body-fetch", terminated(1, "Error"))],
      containerStatuses: [containerStatus("session", waiting("ImagePullBackOff"))],
    });
    expect(podStages(failedFetch, "session", LATER).map((entry) => entry.stage)).toEqual(["scheduled"]);
  });

  it("takes the named container's start, not another's", () => {
    const other = pod({ phase: "Running", containerStatuses: [containerStatus("workspace", RUNNING)] });
    expect(podStages(other, "session", LATER)).toEqual([]);
  });
});
