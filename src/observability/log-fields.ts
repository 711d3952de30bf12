/**
 * What a log line may carry. Fields are copied through a filter before they reach the
 * logger: any key that can name a secret (tokens, credentials, headers) or a user's payload
 * (env values, bundles and their file contents, bodies) is replaced by `[redacted]` at any
 * depth, and errors are reduced to what is safe to print. This is the only path from a
 * caller's fields to a line, so no call site has to remember what not to log.
 */
export const REDACTED = "[redacted]";

const SENSITIVE_KEY =
  /token|secret|passw|credential|authori[sz]ation|cookie|api[-_]?key|^env$|^headers?$|^bundle$|^files$|^contents?$|^body$|^data$|^stdin$/i;

/** Deeper than this the value is summarised: log fields are meant to be flat. */
const MAX_DEPTH = 4;

export function safeFields(fields: Record<string, unknown>): Record<string, unknown> {
  return safeObject(fields, 0);
}

function safeObject(object: object, depth: number): Record<string, unknown> {
  return Object.fromEntries(
    Object.entries(object).map(([key, value]) => [key, SENSITIVE_KEY.test(key) ? REDACTED : safeValue(value, depth + 1)]),
  );
}

function safeValue(value: unknown, depth: number): unknown {
  if (value instanceof Error) return describeError(value);
  if (value === null || typeof value !== "object") return value;
  if (depth > MAX_DEPTH) return "[nested]";
  if (Array.isArray(value)) return value.map((item) => safeValue(item, depth + 1));
  if (Buffer.isBuffer(value) || ArrayBuffer.isView(value)) return `[${value.byteLength} bytes]`;
  return safeObject(value, depth);
}

/** Errors are logged by name, message and cause chain; never by their enumerable fields, which may hold response headers. */
function describeError(error: Error): Record<string, unknown> {
  // A Kubernetes client error's message embeds the response body and headers: log its status only.
  const status = (error as { code?: unknown }).code;
  if (typeof status === "number" && status >= 100 && status <= 599) return { name: error.name, httpStatus: status };
  return {
    name: error.name,
    message: error.message,
    ...(error.cause instanceof Error && { cause: describeError(error.cause) }),
  };
}
