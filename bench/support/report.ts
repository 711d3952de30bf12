/**
 * The one table `npm run bench` prints, and its JSON. Each row is a figure; timings sit next
 * to the baseline measured in the same run, with min/median/p99 and the ratio, because on a
 * shared 2-core machine an absolute millisecond says little and a ratio says more.
 */
import type { Summary } from "./stats.ts";

export type Verdict = "met" | "MISSED" | "";

export type Row = {
  section: string;
  metric: string;
  /** A single value (a count, a rate, bytes), or a distribution of timings. */
  value: number | Summary;
  unit: string;
  /** The same measurement taken the direct way, where the issue names one. */
  baseline?: number | Summary;
  /** runner / baseline on the compared statistic (see `compare`). */
  ratio?: number;
  /** What the ratio or value is compared on, e.g. "p99". */
  compare?: string;
  target?: string;
  verdict?: Verdict;
  note?: string;
};

const isSummary = (value: unknown): value is Summary => typeof value === "object" && value !== null && "median" in value;

export function formatNumber(value: number): string {
  if (!Number.isFinite(value)) return "–";
  if (Number.isInteger(value)) return value.toLocaleString("en-US");
  const abs = Math.abs(value);
  const digits = abs >= 100 ? 0 : abs >= 10 ? 1 : abs >= 1 ? 2 : 3;
  return value.toLocaleString("en-US", { minimumFractionDigits: digits, maximumFractionDigits: digits });
}

function formatValue(value: number | Summary | undefined): string {
  if (value === undefined) return "";
  if (isSummary(value)) return `${formatNumber(value.min)} / ${formatNumber(value.median)} / ${formatNumber(value.p99)} (n=${value.n})`;
  return formatNumber(value);
}

const COLUMNS = ["section", "metric", "runner (min / median / p99)", "baseline", "unit", "ratio", "target", "verdict"] as const;

function cells(row: Row): string[] {
  return [
    row.section,
    row.metric,
    formatValue(row.value),
    formatValue(row.baseline),
    row.unit,
    row.ratio === undefined ? "" : `${formatNumber(row.ratio)}×${row.compare ? ` ${row.compare}` : ""}`,
    row.target ?? "",
    row.verdict ?? "",
  ];
}

/** One aligned plain-text table (also valid inside a Markdown code block). */
export function renderTable(rows: Row[]): string {
  const body = rows.map(cells);
  const widths = COLUMNS.map((title, i) => Math.max(title.length, ...body.map((line) => line[i]!.length)));
  const line = (values: readonly string[]) => values.map((v, i) => v.padEnd(widths[i]!)).join(" | ").trimEnd();
  const out = [line(COLUMNS), widths.map((w) => "-".repeat(w)).join("-+-")];
  let section = "";
  for (const values of body) {
    // The section name is printed once, at the first row of its group.
    const shown = values[0] === section ? ["", ...values.slice(1)] : values;
    section = values[0]!;
    out.push(line(shown));
  }
  return out.join("\n");
}

/** The notes of the rows that carry one, as a list under the table. */
export function renderNotes(rows: Row[]): string {
  return rows
    .filter((row) => row.note)
    .map((row) => `- ${row.section} / ${row.metric}: ${row.note}`)
    .join("\n");
}
