/** The engine's decisions, one rule per case: a read of the session pod, where the session stands, and the time. */
import { describe, expect, it } from "vitest";
import { decidePod, type SessionPhase } from "../../../src/kube/status/pod-decision.ts";
import { containerStatus, pod, RUNNING, terminated, waiting } from "./pods.ts";

const NOW = Date.parse("2026-11-29T16:30:10Z");
const run: SessionPhase = { kind: "starting", deadlineAt: NOW + 1000, needsIp: false, finishedRan: true, seen: true };
const watch: SessionPhase = { kind: "starting", deadlineAt: NOW + 1000, needsIp: true, finishedRan: false, seen: true };
const live: SessionPhase = { kind: "live" };

const pending = pod({ phase: "Pending", containerStatuses: [containerStatus("session", waiting("ContainerCreating"))] });
const running = pod({ phase: "Running", containerStatuses: [containerStatus("session", RUNNING)] });
const withIp = pod({ phase: "Running", podIP: "10.244.0.17", containerStatuses: [containerStatus("session", RUNNING)] });
const succeeded = pod({ phase: "Succeeded", containerStatuses: [containerStatus("session", terminated(0, "Completed"))] });
const failed = pod({ phase: "Failed", containerStatuses: [containerStatus("session", terminated(3, "Error"))] });

describe("decidePod while starting", () => {
  it("waits while the pod is Pending and the deadline is ahead", () => {
    expect(decidePod(pending, run, NOW)).toEqual({ kind: "wait" });
  });

  it("is ready once Running; a watch pod also needs its IP", () => {
    expect(decidePod(running, run, NOW)).toEqual({ kind: "ready", pod: running });
    expect(decidePod(running, watch, NOW)).toEqual({ kind: "wait" });
    expect(decidePod(withIp, watch, NOW)).toEqual({ kind: "ready", pod: withIp });
  });

  it("fails at the deadline naming what the pod waits on, never `pod failed`", () => {
    const fetching = pod({
      phase: "Pending",
      initContainerStatuses: [containerStatus("body-fetch", RUNNING)],
      containerStatuses: [containerStatus("session", waiting("PodInitializing"))],
    });
    expect(decidePod(fetching, run, NOW + 1000)).toEqual({
      kind: "start-failed",
      message: 'pod did not reach Running within the start deadline (init container "body-fetch" still running)',
    });
    const backingOff = pod({
      phase: "Pending",
      containerStatuses: [containerStatus("session", waiting("ImagePullBackOff", 'Back-off pulling image "telorun/node:0.14.0-slim"'))],
    });
    expect(decidePod(backingOff, run, NOW + 1000)).toEqual({
      kind: "start-failed",
      message: 'pod did not reach Running within the start deadline (container "session" waiting: ImagePullBackOff: Back-off pulling image "telorun/node:0.14.0-slim")',
    });
    const unschedulable = pod({
      phase: "Pending",
      conditions: [{ type: "PodScheduled", status: "False", reason: "Unschedulable", message: "0/3 nodes are available: 3 Insufficient memory." }],
    });
    expect(decidePod(unschedulable, run, NOW + 1000)).toEqual({
      kind: "start-failed",
      message: "pod did not reach Running within the start deadline (not scheduled: Unschedulable: 0/3 nodes are available: 3 Insufficient memory.)",
    });
  });

  it("counts the deadline as reached at its very millisecond, not before", () => {
    expect(decidePod(pending, run, NOW + 999)).toEqual({ kind: "wait" });
    expect(decidePod(pending, run, NOW + 1000)).toMatchObject({ kind: "start-failed" });
  });

  it("lets a pod's own state win over a passed deadline: serving is ready, finished is its end", () => {
    const late = NOW + 60_000;
    expect(decidePod(running, run, late)).toEqual({ kind: "ready", pod: running });
    expect(decidePod(withIp, watch, late)).toEqual({ kind: "ready", pod: withIp });
    expect(decidePod(succeeded, run, late)).toEqual({ kind: "ran", pod: succeeded });
    expect(decidePod(failed, watch, late)).toEqual({ kind: "start-failed", message: "pod reached Failed before serving" });
  });

  it("fails at the deadline a watch pod that runs but has no IP yet", () => {
    // Not "did not reach Running (not scheduled yet)", as it once said of a pod that runs.
    expect(decidePod(running, watch, NOW + 1000)).toEqual({
      kind: "start-failed",
      message: "pod had no IP within the start deadline (it runs, but its workspace cannot be dialled)",
    });
  });

  it("fails at the deadline a pod the watch has not reported yet", () => {
    const unseen = { ...run, seen: false };
    expect(decidePod(undefined, unseen, NOW)).toEqual({ kind: "wait" });
    expect(decidePod(undefined, unseen, NOW + 1000)).toEqual({
      kind: "start-failed",
      message: "pod did not reach Running within the start deadline (the pod watch has not seen it)",
    });
  });

  it("fails when a pod it saw disappears", () => {
    expect(decidePod(undefined, run, NOW)).toEqual({ kind: "start-failed", message: "pod disappeared before reaching Running" });
  });

  it("a run pod that succeeded between two events ran; one that failed names its container", () => {
    expect(decidePod(succeeded, run, NOW)).toEqual({ kind: "ran", pod: succeeded });
    expect(decidePod(failed, run, NOW)).toEqual({ kind: "start-failed", message: 'container "session" failed: Error (exit code 3)' });
  });

  it("a watch pod that finished before serving failed", () => {
    expect(decidePod(pod({ phase: "Failed", reason: "Evicted" }), watch, NOW)).toEqual({ kind: "start-failed", message: "pod reached Failed before serving" });
    expect(decidePod(succeeded, watch, NOW)).toEqual({ kind: "start-failed", message: "pod reached Succeeded before serving" });
  });
});

describe("decidePod once live", () => {
  it("waits while the pod runs, whatever the clock", () => {
    expect(decidePod(running, live, NOW + 10_000_000)).toEqual({ kind: "wait" });
  });

  it("has ended once the pod finished, and is gone once it disappeared", () => {
    expect(decidePod(succeeded, live, NOW)).toEqual({ kind: "ended", pod: succeeded });
    expect(decidePod(failed, live, NOW)).toEqual({ kind: "ended", pod: failed });
    expect(decidePod(undefined, live, NOW)).toEqual({ kind: "gone" });
  });
});
