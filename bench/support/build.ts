/**
 * The runner as its image runs it: `npm run build`'s output (src/release/build.ts: compiled
 * JavaScript, each process entry bundled, with chunks for on-demand and shared code), not the TypeScript loader the tests use.
 * tsx transpiles in a loader thread of its own, which adds about 100 MB of resident memory to
 * the two processes together — a cost operators never pay, so the bench builds first.
 *
 * The output goes under .tmp/ (git-ignored) inside the checkout, so the compiled files
 * resolve the checkout's node_modules and its package.json ("type": "module").
 */
import { access, rm } from "node:fs/promises";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { buildRunner } from "../../src/release/build.ts";

const ROOT = fileURLToPath(new URL("../..", import.meta.url));
/** BENCH_COMPILED_DIR runs an earlier build kept aside, for before/after runs side by side. */
export const COMPILED_DIR = process.env.BENCH_COMPILED_DIR ?? join(ROOT, ".tmp", "bench-dist");

/** Entry points relative to the checkout, as `tsx` runs them; compiled twins under COMPILED_DIR. */
export function compiledEntry(entry: string): string {
  return join(COMPILED_DIR, entry.replace(/\.ts$/, ".js"));
}

/**
 * Builds as `npm run build` does, into COMPILED_DIR. A type error elsewhere in a checkout being
 * worked on does not stop the emit; only missing entry points fail the bench.
 */
export async function compileRunner(entries: string[]): Promise<{ ms: number; typeErrors: boolean }> {
  const start = performance.now();
  await rm(COMPILED_DIR, { recursive: true, force: true });
  const { typeReport } = await buildRunner({ root: ROOT, outDir: COMPILED_DIR, sourceMaps: false }, false);
  if (typeReport) process.stderr.write(`[bench] tsc reported errors (the emit is used anyway):\n${typeReport.slice(0, 4000)}\n`);
  for (const entry of entries) await access(compiledEntry(entry));
  return { ms: performance.now() - start, typeErrors: typeReport !== "" };
}
