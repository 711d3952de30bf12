/**
 * Joining what a container printed before its terminal was attached (read from the pod log)
 * with what the attach delivered meanwhile: the log was read after the attach
 * opened, so its end may repeat the attach's first bytes. Nothing is lost, nothing shown twice.
 */

/** Longest overlap looked for: the log read is bounded, and the race it covers is short. */
const MAX_OVERLAP_BYTES = 64 * 1024;

/** How many leading bytes of `live` the end of `log` already holds. */
export function overlapLength(log: Uint8Array, live: Uint8Array): number {
  const longest = Math.min(log.byteLength, live.byteLength, MAX_OVERLAP_BYTES);
  for (let length = longest; length > 0; length -= 1) {
    if (Buffer.compare(log.subarray(log.byteLength - length), live.subarray(0, length)) === 0) return length;
  }
  return 0;
}
