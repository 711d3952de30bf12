/**
 * Whether a failed pod create is tried again: a 429 or a 5xx is the apiserver's passing trouble,
 * and a call with no answer at all (its deadline passed, the connection was cut or refused) may
 * have created the pod or not, which the retry finds out (a 409 is the earlier attempt's pod); so
 * the create is retried with a doubling pause, a bounded number of times, and never past the
 * start deadline. Anything else (403 quota, 422) is final.
 */
import { httpStatusOf } from "../status/api-error.ts";

export const CREATE_ATTEMPTS = 5;
const FIRST_PAUSE_MS = 250;
const LONGEST_PAUSE_MS = 4_000;

/** The pause before attempt `attempt + 1` (attempts count from 1), or undefined to give up. */
export function createRetryPause(error: unknown, attempt: number, now: number, deadlineAt: number): number | undefined {
  const code = httpStatusOf(error);
  if (code !== undefined && code !== 429 && code < 500) return undefined;
  if (attempt >= CREATE_ATTEMPTS) return undefined;
  const pause = Math.min(FIRST_PAUSE_MS * 2 ** (attempt - 1), LONGEST_PAUSE_MS);
  return now + pause < deadlineAt ? pause : undefined;
}
