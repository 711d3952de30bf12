/** Summaries of repeated measurements: min, median and p99 (nearest rank), and ratios. */

export type Summary = { n: number; min: number; median: number; p99: number; max: number };

/** Nearest-rank percentile of ascending `sorted`; with fewer than 100 samples p99 is the maximum. */
export function percentile(sorted: number[], p: number): number {
  if (sorted.length === 0) return Number.NaN;
  const rank = Math.ceil((p / 100) * sorted.length);
  return sorted[Math.min(sorted.length, Math.max(1, rank)) - 1]!;
}

export function summarize(samples: number[]): Summary {
  const sorted = [...samples].sort((a, b) => a - b);
  return {
    n: sorted.length,
    min: sorted[0] ?? Number.NaN,
    median: percentile(sorted, 50),
    p99: percentile(sorted, 99),
    max: sorted.at(-1) ?? Number.NaN,
  };
}

/** measured / baseline; NaN when there is no baseline to divide by. */
export function ratio(measured: number, baseline: number): number {
  return baseline > 0 ? measured / baseline : Number.NaN;
}

/** Milliseconds since `start` (a performance.now() reading). */
export function since(start: number): number {
  return performance.now() - start;
}

export const MiB = 1024 * 1024;
