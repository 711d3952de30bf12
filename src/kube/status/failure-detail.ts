/**
 * A failed container's output as a status message: plain text that names the cause. The
 * terminal keeps the colours; a status message is read as text, so ANSI escapes go. A kernel's
 * load failure prints one block per diagnostic and a summary ("13 errors") last: cutting the
 * raw output at the limit showed a few diagnostics and neither the count nor, often, the actual
 * mistake. Kept instead: the summary line first, then as many whole diagnostic lines as fit.
 */

const DETAIL_LIMIT = 500;

/** CSI sequences (colours, cursor moves), OSC sequences (titles, links) and lone escapes. */
const ANSI = /\u001b\[[0-?]*[ -/]*[@-~]|\u001b\][^\u0007\u001b]*(?:\u0007|\u001b\\)|\u001b[@-Z\\-_]/g;

/** A line that counts what went wrong: "13 errors", "Found 2 problems", "1 error, 3 warnings". */
const SUMMARY = /\b\d+\s+(?:errors?|problems?|diagnostics?|failures?)\b/i;

export function stripAnsi(text: string): string {
  return text.replace(ANSI, "");
}

/** `raw` without escapes and blank lines, within `limit` characters (then ending in `…`). */
export function failureDetail(raw: string, limit = DETAIL_LIMIT): string {
  const lines = stripAnsi(raw)
    .split(/\r\n|\r|\n/)
    .map((line) => line.trimEnd())
    .filter((line) => line.trim() !== "");
  const text = lines.join("\n").trim();
  if (text.length <= limit) return text;
  const summary = lines.findLast((line) => SUMMARY.test(line));
  const kept: string[] = summary === undefined ? [] : [summary.trim()];
  let length = kept[0]?.length ?? 0;
  for (const line of lines) {
    if (line === summary) continue;
    const room = limit - length - (kept.length > 0 ? 1 : 0);
    if (line.length > room) {
      // A first line too long to keep whole is cut; otherwise whole lines only.
      if (kept.length === 0) kept.push(line.trim().slice(0, limit));
      break;
    }
    kept.push(line);
    length += line.length + (kept.length > 1 ? 1 : 0);
  }
  return `${kept.join("\n")}…`;
}
