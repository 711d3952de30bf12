/**
 * The start deadline's timer decides as of the deadline (src/kube/session/session-pod.ts). Node
 * runs timers on the monotonic clock in whole milliseconds, so one may fire a millisecond
 * before Date.now() reaches the deadline; a pod with no further event (its container creating
 * for an hour) must still fail its start then, not wait for ever.
 */
import type { V1Pod } from "@kubernetes/client-node";
import { afterEach, beforeEach, expect, it, vi } from "vitest";
import type { KubeContext } from "../../../src/kube/context.ts";
import { SessionPod, StartFailure } from "../../../src/kube/session/session-pod.ts";

const DEADLINE_MS = 1_000;

const creating: V1Pod = {
  metadata: { name: "telo-run-s1" },
  status: { phase: "Pending", containerStatuses: [{ name: "session", image: "x", imageID: "", ready: false, restartCount: 0, state: { waiting: { reason: "ContainerCreating" } } }] },
};

/** What SessionPod reads of its context before a create: the watch's copy and the deadline. */
function context(pod: V1Pod): KubeContext {
  const watcher = { get: () => pod, subscribe: () => () => undefined };
  return { watcher, timings: { startDeadlineMs: DEADLINE_MS } } as unknown as KubeContext;
}

beforeEach(() => {
  vi.useFakeTimers();
});
afterEach(() => {
  vi.useRealTimers();
});

it("fails the start when the deadline timer fires a millisecond before the wall clock reaches the deadline", async () => {
  const pod = new SessionPod(context(creating), {
    podName: "telo-run-s1",
    needsIp: false,
    finishedRan: true,
    adopted: true,
    stopRequested: new AbortController().signal,
    onProgress: () => undefined,
  });
  pod.check();
  let outcome: unknown = "pending";
  pod.started.then(
    (value) => (outcome = value),
    (error: unknown) => (outcome = error),
  );
  vi.advanceTimersByTime(DEADLINE_MS - 1);
  // The wall clock a millisecond behind the timers' clock, as their rounding can leave it.
  vi.setSystemTime(Date.now() - 1);
  vi.advanceTimersByTime(1);
  await vi.runAllTimersAsync();
  expect(outcome).toBeInstanceOf(StartFailure);
  expect((outcome as StartFailure).message).toMatch(/^pod did not reach Running within the start deadline \(container "session" waiting: ContainerCreating\)$/);
});
