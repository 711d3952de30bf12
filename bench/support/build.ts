/**
 * The runner as its image runs it: compiled JavaScript (`node dist/src/.../main.js`), not the
 * TypeScript loader the tests use. tsx transpiles in a loader thread of its own, which adds
 * about 100 MB of resident memory to the two processes together (measured: 291 MB idle from
 * source, 193 MB compiled) — a cost operators never pay, so the bench compiles first.
 *
 * The output goes under .tmp/ (git-ignored) inside the checkout, so the compiled files
 * resolve the checkout's node_modules and its package.json ("type": "module").
 */
import { spawn } from "node:child_process";
import { access, rm } from "node:fs/promises";
import { createRequire } from "node:module";
import { join } from "node:path";
import { fileURLToPath } from "node:url";

const ROOT = fileURLToPath(new URL("../..", import.meta.url));
export const COMPILED_DIR = join(ROOT, ".tmp", "bench-dist");

/** Entry points relative to the checkout, as `tsx` runs them; compiled twins under COMPILED_DIR. */
export function compiledEntry(entry: string): string {
  return join(COMPILED_DIR, entry.replace(/\.ts$/, ".js"));
}

/**
 * Compiles src/ and handlers/ with the project's tsconfig.build.json. A type error elsewhere in
 * a checkout being worked on does not stop the emit; only missing entry points fail the bench.
 */
export async function compileRunner(entries: string[]): Promise<{ ms: number; typeErrors: boolean }> {
  const start = performance.now();
  await rm(COMPILED_DIR, { recursive: true, force: true });
  const tsc = createRequire(import.meta.url).resolve("typescript/bin/tsc");
  const code = await new Promise<number>((resolve, reject) => {
    const child = spawn(process.execPath, [tsc, "-p", join(ROOT, "tsconfig.build.json"), "--outDir", COMPILED_DIR, "--sourceMap", "false"], {
      cwd: ROOT,
      stdio: ["ignore", "pipe", "inherit"],
    });
    let out = "";
    child.stdout.on("data", (chunk: Buffer) => (out += chunk.toString()));
    child.once("error", reject);
    child.once("exit", (exit) => {
      if (exit !== 0 && out) process.stderr.write(`[bench] tsc reported errors (the emit is used anyway):\n${out.slice(0, 4000)}\n`);
      resolve(exit ?? 1);
    });
  });
  for (const entry of entries) await access(compiledEntry(entry));
  return { ms: performance.now() - start, typeErrors: code !== 0 };
}
