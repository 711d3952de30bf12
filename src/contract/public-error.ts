/**
 * What an error answer may say about a failure it did not foresee: the
 * action and, when the error carries one, the HTTP status the cluster answered — never the
 * error's own text, which for a Kubernetes client error holds the Status body and the response
 * headers. The full error goes to the log (src/log.ts keeps even that to name and status).
 */
function httpStatus(error: unknown): number | undefined {
  if (error === null || typeof error !== "object") return undefined;
  for (const key of ["statusCode", "code"] as const) {
    const value = (error as Record<string, unknown>)[key];
    if (typeof value === "number" && Number.isInteger(value) && value >= 100 && value <= 599) return value;
  }
  return undefined;
}

export function publicFailure(action: string, error: unknown): string {
  const status = httpStatus(error);
  return status !== undefined ? `${action} failed: the cluster answered HTTP ${status}` : `${action} failed`;
}
