/**
 * A failed container's output as a status message: plain text that names the cause. The
 * terminal keeps the colours; a status message is read as text, so ANSI escapes go. A kernel's
 * load failure prints one block per diagnostic and a summary ("13 errors") last; the one that
 * says what is wrong may be the last block, after a dozen others. Cutting the raw output at the
 * limit, or keeping its blocks in order, showed the count and a few diagnostics and cut off the
 * cause. So a report of diagnostics is rewritten cause first (see diagnosticsDetail).
 */

const DETAIL_LIMIT = 500;

/** CSI sequences (colours, cursor moves), OSC sequences (titles, links) and lone escapes. */
const ANSI = /\u001b\[[0-?]*[ -/]*[@-~]|\u001b\][^\u0007\u001b]*(?:\u0007|\u001b\\)|\u001b[@-Z\\-_]/g;

/** A line that counts what went wrong: "13 errors", "Found 2 problems", "1 error, 3 warnings". */
const SUMMARY = /\b\d+\s+(?:errors?|problems?|diagnostics?|failures?)\b/i;

/**
 * The first line of a diagnostic as the Telo CLI prints it (its `formatDiagnostics`): where,
 * then the severity and the message between runs of two spaces, the code last:
 * `telo.yaml:4:12  error  'Http.Api.todos' is not defined  UNRESOLVED_REFERENCE`,
 * `  error  Http.Server api: port is required  SCHEMA_VIOLATION` (a resource's), nested ones
 * indented further.
 */
const TELO_DIAGNOSTIC = /^\s*(?:\S+\s{2,})?(error|warning)\s{2,}\S.*?(?:\s{2,}([A-Z][A-Z0-9_]*))?$/;

/** The first line of a diagnostic in the prefix form of Node and most compilers: `error[CODE]: …`, `warning: …`. */
const PREFIXED_DIAGNOSTIC = /^\s*(error|warning|warn)(?:\[([^\]]+)\])?\s*:/i;

/** A diagnostic's severity and code (the whole line where it names none), if `line` begins one. */
function diagnosticHeader(line: string): { severity: "error" | "warning"; code: string } | undefined {
  const header = TELO_DIAGNOSTIC.exec(line) ?? PREFIXED_DIAGNOSTIC.exec(line);
  if (!header) return undefined;
  return { severity: header[1]!.toLowerCase() === "error" ? "error" : "warning", code: header[2] ?? header[0] };
}

/** A prefixed diagnostic's location line: `--> telo.yaml:3:5`, `at telo.yaml:3` (the Telo CLI puts it first on the diagnostic's own line). */
const LOCATION = /^\s*(?:-->|at\s)\s*\S+:\d+/;

export function stripAnsi(text: string): string {
  return text.replace(ANSI, "");
}

/** Whole lines from the start within `limit` characters, then `…`; a first line too long is cut. */
function withinLimit(lines: readonly string[], limit: number): string {
  const text = lines.join("\n");
  if (text.length <= limit) return text;
  const kept: string[] = [];
  let length = 0;
  for (const line of lines) {
    const room = limit - length - (kept.length > 0 ? 1 : 0);
    if (line.length > room) {
      if (kept.length === 0) kept.push(line.trim().slice(0, limit));
      break;
    }
    kept.push(line);
    length += line.length + (kept.length > 1 ? 1 : 0);
  }
  return `${kept.join("\n")}…`;
}

type Diagnostic = { severity: "error" | "warning"; code: string; header: string; location: string | undefined; count: number };

/** The diagnostics of `lines` and whatever else they hold, one entry per severity and code. */
function parseDiagnostics(lines: readonly string[], summary: string | undefined): { diagnostics: Diagnostic[]; other: string[] } {
  const diagnostics: Diagnostic[] = [];
  const other: string[] = [];
  let current: Diagnostic | undefined;
  for (const line of lines) {
    if (line === summary) continue;
    const header = diagnosticHeader(line);
    if (header) {
      const { severity, code } = header;
      const same = diagnostics.find((each) => each.severity === severity && each.code === code);
      if (same) same.count += 1;
      current = same ? undefined : { severity, code, header: line.trim(), location: undefined, count: 1 };
      if (current) diagnostics.push(current);
    } else if (current && current.location === undefined && LOCATION.test(line)) {
      current.location = line.trimEnd();
    } else if (current === undefined && diagnostics.length === 0) {
      other.push(line);
    }
  }
  return { diagnostics, other };
}

/**
 * A report of several diagnostics, cause first: the kernel's own summary line, then the errors,
 * then anything printed before the first diagnostic, then the warnings. Each diagnostic is its
 * first line and its location (the code frame under it is the terminal's); diagnostics of one
 * code are one entry saying how many more there were, since a dozen of a kind are usually one
 * mistake's echoes. Undefined for output with fewer than two diagnostics.
 */
function diagnosticsDetail(lines: readonly string[], limit: number): string | undefined {
  const summary = lines.findLast((line) => SUMMARY.test(line) && diagnosticHeader(line) === undefined);
  const { diagnostics, other } = parseDiagnostics(lines, summary);
  if (diagnostics.reduce((sum, each) => sum + each.count, 0) < 2) return undefined;
  const shown = (severity: Diagnostic["severity"]) =>
    diagnostics
      .filter((each) => each.severity === severity)
      .flatMap((each) => [each.count > 1 ? `${each.header} (and ${each.count - 1} more like it)` : each.header, ...(each.location ? [each.location] : [])]);
  return withinLimit([...(summary ? [summary.trim()] : []), ...shown("error"), ...other, ...shown("warning")], limit);
}

/** `raw` without escapes and blank lines, within `limit` characters (then ending in `…`). */
export function failureDetail(raw: string, limit = DETAIL_LIMIT): string {
  const lines = stripAnsi(raw)
    .split(/\r\n|\r|\n/)
    .map((line) => line.trimEnd())
    .filter((line) => line.trim() !== "");
  const diagnostics = diagnosticsDetail(lines, limit);
  if (diagnostics !== undefined) return diagnostics;
  const text = lines.join("\n").trim();
  if (text.length <= limit) return text;
  // No diagnostics to order: the count first, when there is one, then the lines in order.
  const summary = lines.findLast((line) => SUMMARY.test(line));
  return withinLimit([...(summary === undefined ? [] : [summary.trim()]), ...lines.filter((line) => line !== summary)], limit);
}
