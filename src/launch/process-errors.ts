/**
 * The last word of a process that fails in a way nothing caught: one JSON log line (src/log.ts),
 * not a raw stack on stderr that a log pipeline splits into dozens of unparsed lines.
 * The process still ends, with exit code 1, as Node would end it.
 */
import type { Logger } from "../log.ts";

export function logProcessErrors(log: Logger): void {
  process.on("uncaughtException", (error) => {
    log.error("uncaught exception; exiting", { error });
    process.exit(1);
  });
  process.on("unhandledRejection", (reason) => {
    log.error("unhandled promise rejection; exiting", { error: reason });
    process.exit(1);
  });
}
