/**
 * The clock every hold is judged on: monotonic (a wall-clock step cannot extend or cut a hold),
 * in epoch milliseconds from when the process started, so that the Lease times written with it
 * read as dates. A process paused by SIGSTOP, a throttled cgroup or a paused VM finds on resuming
 * that this clock went on without it.
 */
export const monotonicNow = (): number => performance.timeOrigin + performance.now();
