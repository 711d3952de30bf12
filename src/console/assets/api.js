// The console's HTTP calls. Refusals become one readable line: a refused Telo version says why
// (its `reason`, as Studio shows it), anything else its `message`.

/** An error whose text is what the runner said, with the runner's code kept for the caller. */
export class RunnerError extends Error {
  constructor(status, body) {
    super(body?.error === "telo_version_unavailable" && body.reason ? body.reason : (body?.message ?? body?.error ?? `HTTP ${status}`));
    this.status = status;
    this.code = body?.error;
  }
}

export async function json(method, path, body, headers = {}) {
  const response = await fetch(path, {
    method,
    headers: body === undefined ? headers : { ...headers, "content-type": "application/json" },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await response.text();
  const value = text === "" ? undefined : JSON.parse(text);
  if (!response.ok) throw new RunnerError(response.status, value);
  return value;
}

/** The header naming the terms version the user accepted (docs/api.md "Terms"). */
export const TERMS_HEADER = "x-telo-accepted-terms";

export const sessionPath = (id, rest = "") => `/v1/sessions/${encodeURIComponent(id)}${rest}`;
