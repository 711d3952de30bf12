/**
 * Whether a refused terminal attach is tried again. While the control plane restarts,
 * the apiserver is unreachable, answers 5xx, or listens before its authenticator and authorizer
 * have synced and answers 401 or 403 to calls its RBAC allows; so those are tried again with a doubling pause, a
 * bounded number of times. Anything else (400, 404: the container or its pod is no more) is
 * final at once. The caller also stops as soon as the container has ended.
 */
import { httpStatusOf } from "../status/api-error.ts";

export const ATTACH_ATTEMPTS = 10;
const LONGEST_PAUSE_FACTOR = 8;

/**
 * The pause before attempt `attempt + 1` (attempts count from 1): `firstPauseMs`, doubling up to
 * eight times it; undefined to give up.
 */
export function attachRetryPause(error: unknown, attempt: number, firstPauseMs: number): number | undefined {
  const code = httpStatusOf(error);
  const passing = code === undefined || code === 401 || code === 403 || code === 429 || code >= 500;
  if (!passing || attempt >= ATTACH_ATTEMPTS) return undefined;
  return firstPauseMs * Math.min(2 ** (attempt - 1), LONGEST_PAUSE_FACTOR);
}
