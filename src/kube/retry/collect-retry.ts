/**
 * Whether a failed delete of a pod nobody else will delete (an ended session's, a failed
 * start's) is tried again: otherwise one 503 leaves the pod holding quota until the next
 * supervisor's boot (found by the chaos run). A 429, a 5xx or no answer at all (a
 * refused connection, the call deadline) is passing trouble; any other refusal is final.
 */
import { httpStatusOf } from "../status/api-error.ts";

export const COLLECT_ATTEMPTS = 8;
const FIRST_PAUSE_MS = 500;
const LONGEST_PAUSE_MS = 30_000;

/** The pause after failed attempt `attempt` (attempts count from 1), or undefined to give up. */
export function collectRetryPause(error: unknown, attempt: number): number | undefined {
  const code = httpStatusOf(error);
  if (code !== undefined && code !== 429 && code < 500) return undefined;
  if (attempt >= COLLECT_ATTEMPTS) return undefined;
  return Math.min(FIRST_PAUSE_MS * 2 ** (attempt - 1), LONGEST_PAUSE_MS);
}
