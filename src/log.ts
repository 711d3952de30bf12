/**
 * The logger of both processes: pino, one JSON object per line on stderr
 * (`{"level","time","component","pid",["requestId"],[bindings…],fields…,"message"}`), so a
 * cluster's log pipeline reads it without a formatter; rendered for people when stderr is a
 * terminal. Every field goes through safeFields (redaction), and a line written while a
 * request is being served carries its request id.
 */
import { pino } from "pino";
import { safeFields } from "./observability/log-fields.ts";
import { prettyLine } from "./observability/pretty.ts";
import { currentRequestId } from "./observability/request-context.ts";

export const LOG_LEVELS = ["debug", "info", "warn", "error", "silent"] as const;
export type LogLevel = (typeof LOG_LEVELS)[number];

export type Logger = {
  debug(message: string, fields?: Record<string, unknown>): void;
  info(message: string, fields?: Record<string, unknown>): void;
  warn(message: string, fields?: Record<string, unknown>): void;
  error(message: string, fields?: Record<string, unknown>): void;
  /** A logger whose every line also carries `bindings` (a session's id, say). */
  child(bindings: Record<string, unknown>): Logger;
};

/** Where lines go unless a caller says otherwise: stderr, readable when it is a terminal. */
function stderrWriter(): (line: string) => void {
  if (process.stderr.isTTY) return (line) => process.stderr.write(prettyLine(line, true));
  return (line) => process.stderr.write(line);
}

export function createLogger(component: string, level: string, write: (line: string) => void = stderrWriter()): Logger {
  const root = pino(
    {
      level: (LOG_LEVELS as readonly string[]).includes(level) ? level : "info",
      base: { component, pid: process.pid },
      messageKey: "message",
      timestamp: pino.stdTimeFunctions.isoTime,
      formatters: { level: (label) => ({ level: label }) },
      mixin: () => {
        const requestId = currentRequestId();
        return requestId === undefined ? {} : { requestId };
      },
    },
    { write },
  );
  return wrap(root);
}

function wrap(logger: pino.Logger): Logger {
  const emit = (name: "debug" | "info" | "warn" | "error") => (message: string, fields?: Record<string, unknown>) => {
    // Fields are filtered only when the line will be written.
    if (logger.isLevelEnabled(name)) logger[name](fields ? safeFields(fields) : {}, message);
  };
  return {
    debug: emit("debug"),
    info: emit("info"),
    warn: emit("warn"),
    error: emit("error"),
    child: (bindings) => wrap(logger.child(safeFields(bindings))),
  };
}
