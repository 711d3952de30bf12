/**
 * A small structured logger: one JSON object per line on stderr, so both processes' logs can
 * be read by a cluster's log pipeline without a formatter.
 */
const LEVELS = { debug: 10, info: 20, warn: 30, error: 40, silent: 100 } as const;
export type LogLevel = keyof typeof LEVELS;

export type Logger = {
  debug(message: string, fields?: Record<string, unknown>): void;
  info(message: string, fields?: Record<string, unknown>): void;
  warn(message: string, fields?: Record<string, unknown>): void;
  error(message: string, fields?: Record<string, unknown>): void;
};

export function createLogger(component: string, level: string, write = (line: string) => process.stderr.write(line)): Logger {
  const threshold = LEVELS[level as LogLevel] ?? LEVELS.info;
  const emit = (name: Exclude<LogLevel, "silent">) => (message: string, fields?: Record<string, unknown>) => {
    if (LEVELS[name] < threshold) return;
    write(`${JSON.stringify({ time: new Date().toISOString(), level: name, component, message, ...serialise(fields) })}\n`);
  };
  return { debug: emit("debug"), info: emit("info"), warn: emit("warn"), error: emit("error") };
}

/** Errors are logged by name, message and cause chain; never by their enumerable fields, which may hold response headers. */
function serialise(fields: Record<string, unknown> | undefined): Record<string, unknown> | undefined {
  if (!fields) return undefined;
  return Object.fromEntries(Object.entries(fields).map(([key, value]) => [key, value instanceof Error ? describeError(value) : value]));
}

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
