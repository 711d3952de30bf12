/** The end of a session whose claimed warm pool pod never took its application. */

/** The failure message: what did not happen, by when, and that the pod is gone. */
export function claimUnfetchedMessage(deadlineMs: number): string {
  const seconds = Math.round(deadlineMs / 100) / 10;
  return `the warm pool pod claimed for this session did not fetch the application within ${seconds} s of its claim (its claim answer did not reach it); the pod is deleted`;
}
