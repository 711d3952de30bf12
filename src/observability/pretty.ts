/**
 * The terminal rendering of a log line: when stderr is a TTY a person is reading, so each
 * JSON line is shown as `time LEVEL component message key=value…` instead. The JSON line is
 * the source: this only reformats what would have been written (redaction has happened).
 */
const LEVEL_COLOURS: Record<string, string> = { debug: "\x1b[90m", info: "\x1b[36m", warn: "\x1b[33m", error: "\x1b[31m" };
const RESET = "\x1b[0m";
/** Printed in the line's head, so not repeated among the fields. */
const HEAD_KEYS = new Set(["time", "level", "component", "message", "pid"]);

export function prettyLine(jsonLine: string, colour: boolean): string {
  let entry: Record<string, unknown>;
  try {
    entry = JSON.parse(jsonLine) as Record<string, unknown>;
  } catch {
    return jsonLine;
  }
  const level = String(entry.level ?? "");
  const time = typeof entry.time === "string" ? entry.time.slice(11, 23) : "";
  const label = level.toUpperCase().padEnd(5);
  const head = `${time} ${colour ? `${LEVEL_COLOURS[level] ?? ""}${label}${RESET}` : label} ${String(entry.component ?? "")}: ${String(entry.message ?? "")}`;
  const fields = Object.entries(entry)
    .filter(([key]) => !HEAD_KEYS.has(key))
    .map(([key, value]) => `${key}=${typeof value === "string" ? value : JSON.stringify(value)}`);
  return `${[head, ...fields].join(" ")}\n`;
}
