/**
 * Whether a terminal attach is tried again. While the control plane restarts,
 * the apiserver is unreachable, answers 5xx, or listens before its authenticator and authorizer
 * have synced and answers 401 or 403 to calls its RBAC allows; so those are tried again with a doubling pause, a
 * bounded number of times. Anything else (400, 404: the container or its pod is no more) is
 * final at once. The caller also stops as soon as the container has ended.
 *
 * An attach stream that opens and closes at once is a failed attempt too, counted with the
 * refusals: kube-apiserver upgrades the WebSocket before it dials the kubelet, so a kubelet it
 * cannot reach shows as a stream that opens, carries an error Status, and closes.
 */
import { httpStatusOf } from "../status/api-error.ts";

export const ATTACH_ATTEMPTS = 10;
const LONGEST_PAUSE_FACTOR = 8;

/**
 * A stream that closed within this long of opening was a failed attempt, not a stream that was
 * cut. A failure to reach the kubelet closes it within one dial (milliseconds, or a second on a
 * loaded control plane); a stream anyone used stayed open far longer. A few seconds separates the
 * two with room to spare, and a stream cut a few times within that is still re-attached, only
 * after a longer pause.
 */
export const SHORT_LIVED_ATTACH_MS = 5_000;

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

/** How an open attach stream ended: the Status on its error channel, or its socket's error. */
export type StreamEnd = { status?: unknown; error?: Error };

/** The next attach after an open stream closed: which attempt it is and the pause before it (undefined: give up). */
export type Reattach = { attempt: number; pauseMs: number | undefined };

/**
 * After the stream of attempt `attempt` closed (the times from one clock): a stream that had
 * stayed open is re-attached after `firstPauseMs` as attempt 1; one that closed at once counts
 * as that attempt failing, refused by what it ended with (its Status's code, as an upgrade's).
 */
export function reattachAfterClose(end: StreamEnd, openedAt: number, closedAt: number, attempt: number, firstPauseMs: number): Reattach {
  if (closedAt - openedAt >= SHORT_LIVED_ATTACH_MS) return { attempt: 1, pauseMs: firstPauseMs };
  return { attempt: attempt + 1, pauseMs: attachRetryPause(end.status ?? end.error, attempt, firstPauseMs) };
}

/**
 * Why attaching failed, for the terminal, when every stream closed as soon as it opened: its
 * Status's reason and code if it carried one (never its message: it names the cluster's
 * internal addresses, as docs/kubernetes.md "Kubernetes API errors" keeps them from clients).
 */
export function closedAtOnceReason(end: StreamEnd): string {
  const code = httpStatusOf(end.status);
  const reason = end.status !== null && typeof end.status === "object" ? (end.status as { reason?: unknown }).reason : undefined;
  const detail = [typeof reason === "string" && reason !== "" ? reason : undefined, code === undefined ? undefined : `HTTP ${code}`].filter(Boolean).join(", ");
  return detail === "" ? "the attach stream closed as soon as it opened" : `the Kubernetes API closed the attach stream as soon as it opened (${detail})`;
}
