/**
 * Polling with a deadline, for tests and benchmarks alike: no sleep stands in for an event and
 * nothing asserts on time; a slow machine only waits longer. No test framework import, so
 * bench/ can use it too.
 */

/** Thrown by a probe to stop waiting at once (a child process died). */
export class GiveUp extends Error {}

/**
 * Polls `probe` until it returns a value other than undefined/false, or fails after
 * `timeoutMs` naming `what` and the probe's last error.
 */
export async function waitFor<T>(
  what: string,
  probe: () => Promise<T | undefined | false> | T | undefined | false,
  timeoutMs = 20_000,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let last: unknown;
  for (;;) {
    try {
      const value = await probe();
      if (value !== undefined && value !== false) return value;
    } catch (error) {
      if (error instanceof GiveUp) throw error;
      last = error;
    }
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}${last ? `: ${String(last)}` : ""}`);
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}
