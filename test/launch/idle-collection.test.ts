/**
 * The collection a runner process makes when it goes quiet after work (src/launch/idle-collection.ts):
 * the sampler's rule, and the sampler on this process's own event loop and V8 heap.
 */
import fc from "fast-check";
import { getHeapStatistics } from "node:v8";
import { describe, expect, it } from "vitest";
import { IDLE_COLLECTION, IDLE_COLLECTION_START, type IdleCollectionState, idleCollectionStep, startIdleCollection } from "../../src/launch/idle-collection.ts";

const policy = IDLE_COLLECTION;
const busy = 0.5;
const quiet = 0.001;
const between = (policy.quietUtilization + policy.busyUtilization) / 2;

const smallHeap = 20 * 1024 * 1024;

/** The collections a run of intervals with these utilisations makes. */
function collections(utilizations: number[], heapBytes = smallHeap): number[] {
  let state: IdleCollectionState = IDLE_COLLECTION_START;
  const at: number[] = [];
  utilizations.forEach((utilization, index) => {
    const step = idleCollectionStep(state, { utilization, heapBytes }, policy);
    state = step.state;
    if (step.collect) at.push(index);
  });
  return at;
}

describe("when a process collects", () => {
  it("never while it has done no work", () => {
    expect(collections(Array(20).fill(quiet))).toEqual([]);
  });

  it("once, after work and then the quiet intervals in a row", () => {
    expect(collections([busy, busy, quiet, quiet, quiet, quiet, quiet])).toEqual([3]);
  });

  it("not while the loop is neither busy nor quiet, and once it is quiet", () => {
    expect(collections([busy, between, between, between, quiet, quiet])).toEqual([5]);
  });

  it("counts the quiet again after an interval that is not", () => {
    expect(collections([busy, quiet, between, quiet, quiet])).toEqual([4]);
  });

  it("does not take the interval after a collection, which the collection's own sweeping fills, for work", () => {
    expect(collections([busy, quiet, quiet, busy, quiet, quiet, quiet, quiet])).toEqual([2]);
    expect(collections([busy, quiet, quiet, quiet, busy, quiet, quiet])).toEqual([2, 6]);
  });

  it("never on a heap over the policy's bound, which V8's own reducer looks after", () => {
    expect(collections([busy, quiet, quiet, quiet], policy.maxHeapBytes + 1)).toEqual([]);
    expect(collections([busy, quiet, quiet], policy.maxHeapBytes)).toEqual([2]);
  });

  it("once per burst of work, however the intervals fall", () => {
    fc.assert(
      fc.property(fc.array(fc.oneof(fc.constant(busy), fc.constant(between), fc.constant(quiet)), { maxLength: 60 }), (utilizations) => {
        const at = collections(utilizations);
        // Each collection follows the quiet intervals it needs, and work since the one before.
        at.forEach((index, n) => {
          const quietRun = utilizations.slice(index + 1 - policy.quietIntervals, index + 1);
          expect(quietRun.length === policy.quietIntervals && quietRun.every((u) => u < policy.quietUtilization)).toBe(true);
          const since = utilizations.slice(n === 0 ? 0 : at[n - 1]! + 1, index + 1);
          expect(since.some((u) => u >= policy.busyUtilization)).toBe(true);
        });
      }),
    );
  });
});

describe("the sampler on this process", () => {
  it("collects the garbage of a burst of work once the loop has gone quiet, and only once", async () => {
    const collected: Record<string, unknown>[] = [];
    const stop = startIdleCollection({ debug: (message, fields) => collected.push({ message, ...fields }) }, { ...policy, intervalMs: 200 });
    try {
      // Work: the loop busy for several intervals, leaving garbage behind.
      let garbage: object[] = [];
      const until = performance.now() + 400;
      while (performance.now() < until) garbage.push({ text: `garbage ${garbage.length}`, items: [garbage.length] });
      const usedWithGarbage = getHeapStatistics().used_heap_size;
      garbage = [];
      const deadline = performance.now() + 10_000;
      while (collected.length === 0 && performance.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 50));
      expect(collected).toEqual([{ message: "collected garbage after work", ms: expect.any(Number) }]);
      expect(getHeapStatistics().used_heap_size).toBeLessThan(usedWithGarbage);
      // Quiet goes on: no further collection without further work.
      await new Promise((resolve) => setTimeout(resolve, 1_000));
      expect(collected).toHaveLength(1);
    } finally {
      stop();
    }
  });
});
