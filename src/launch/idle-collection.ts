/**
 * One full garbage collection when a runner process goes quiet after work. V8 collects the old
 * generation when it grows, and its memory reducer shrinks an idle heap only once the heap has
 * grown by 10 MB since the reducer last ran; a burst of session starts or the end of hundreds of
 * sessions leaves a few MiB of garbage in each process, and in a process that then idles nothing
 * allocates enough to collect it. Measured (docs/benchmarks-relay.md, "The split bundle and the
 * collection after work"): after 81 starts and stops, the supervisor's heap held 27.7 MiB of
 * which 19.2 were in use, and both processes kept 20 MiB more resident memory than before the
 * starts, for good.
 *
 * So each process samples its event loop's utilisation every interval; an interval busier than
 * `busyUtilization` marks it as having worked, and once `quietIntervals` intervals in a row are
 * quieter than `quietUtilization`, it collects once and waits for work again. The collection
 * happens when nothing else runs, and at most once per burst of work. A heap over `maxHeapBytes`
 * is left to V8: it grows by more than the reducer's 10 MB often enough, and a full collection of
 * it would hold the event loop (terminals, Lease renewals) for hundreds of milliseconds.
 */
import { performance, type EventLoopUtilization } from "node:perf_hooks";
import { getHeapStatistics, setFlagsFromString } from "node:v8";
import { runInNewContext } from "node:vm";
import type { Logger } from "../log.ts";

export type IdleCollectionPolicy = {
  intervalMs: number;
  /** An interval with at least this share of the event loop busy counts as work. */
  busyUtilization: number;
  /** An interval below this share counts as quiet. */
  quietUtilization: number;
  quietIntervals: number;
  /** V8's heap (total_heap_size) above which no collection is made. */
  maxHeapBytes: number;
};

export const IDLE_COLLECTION: IdleCollectionPolicy = { intervalMs: 5_000, busyUtilization: 0.05, quietUtilization: 0.02, quietIntervals: 2, maxHeapBytes: 128 * 1024 * 1024 };

/** One interval as the sampler reads it: the event loop's utilisation over it, and V8's heap at its end. */
export type IdleCollectionReading = { utilization: number; heapBytes: number };

/**
 * What the sampler remembers between intervals: whether work happened since the last collection,
 * how long it has been quiet, and whether the interval under way began with a collection.
 */
export type IdleCollectionState = { worked: boolean; quietFor: number; collected: boolean };
export const IDLE_COLLECTION_START: IdleCollectionState = { worked: false, quietFor: 0, collected: false };

/**
 * The sampler's step for one interval's utilisation: the next state, and whether to collect now.
 * The interval after a collection is not read: the collection's own work runs on into it (the
 * main thread sweeps what was freed as it next allocates), and taken for work it would call for
 * another collection, and so on for ever.
 */
export function idleCollectionStep(state: IdleCollectionState, { utilization, heapBytes }: IdleCollectionReading, policy: IdleCollectionPolicy): { state: IdleCollectionState; collect: boolean } {
  if (state.collected) return { state: IDLE_COLLECTION_START, collect: false };
  const worked = state.worked || utilization >= policy.busyUtilization;
  const quietFor = utilization < policy.quietUtilization ? state.quietFor + 1 : 0;
  if (worked && quietFor >= policy.quietIntervals) {
    if (heapBytes > policy.maxHeapBytes) return { state: IDLE_COLLECTION_START, collect: false };
    return { state: { worked: false, quietFor: 0, collected: true }, collect: true };
  }
  return { state: { worked, quietFor, collected: false }, collect: false };
}

/**
 * V8's full collection as a function. Node offers it only with `--expose-gc`; turning the flag on
 * at run time and taking `gc` from a fresh context is how tools that must collect on demand get it
 * without a command-line flag (jest's leak detector does so), and it holds for a process however
 * it was started (the image, `npm start`, the tests under tsx).
 */
function fullCollection(): () => void {
  setFlagsFromString("--expose-gc");
  return runInNewContext("gc") as () => void;
}

/** Starts the sampler in this process (a runner entry's own process only: never a host's); each collection is logged at debug. Returns its stop. */
export function startIdleCollection(log: Pick<Logger, "debug">, policy: IdleCollectionPolicy = IDLE_COLLECTION): () => void {
  const collect = fullCollection();
  let state = IDLE_COLLECTION_START;
  let last: EventLoopUtilization = performance.eventLoopUtilization();
  const timer = setInterval(() => {
    const now = performance.eventLoopUtilization();
    const reading = { utilization: performance.eventLoopUtilization(now, last).utilization, heapBytes: getHeapStatistics().total_heap_size };
    const step = idleCollectionStep(state, reading, policy);
    last = now;
    state = step.state;
    if (!step.collect) return;
    const began = performance.now();
    // Twice: the first frees, and the second moves what the first left on sparse pages, so that
    // whole pages go back to the system (one alone left the supervisor's heap 10 MiB larger).
    collect();
    collect();
    last = performance.eventLoopUtilization();
    log.debug("collected garbage after work", { ms: Math.round(performance.now() - began) });
  }, policy.intervalMs);
  timer.unref();
  return () => clearInterval(timer);
}
