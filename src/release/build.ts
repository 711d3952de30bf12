/**
 * The runner as its image runs it (`npm run build`). tsc compiles src/ and handlers/ into
 * `<out>/` (the package's library surface, the CLI, the embedded cluster's entry), the console
 * page's files are copied beside their module, and then each process entry is bundled over its
 * own compiled file: one file holding every module it imports, tree-shaken and minified.
 *
 * Why bundle (memory, docs/benchmarks.md): client-node's index loads every generated API and model,
 * about 1,500 modules, for the handful the supervisor calls. Loaded one by one they hold about
 * 57 MiB of the supervisor's idle 140 MiB; bundled, it idles at about 83 MiB. Paths the code
 * resolves at run time go through src/install-layout.ts, which a bundle does not move.
 */
import { spawn } from "node:child_process";
import { cp } from "node:fs/promises";
import { createRequire } from "node:module";
import { join } from "node:path";
import { build } from "esbuild";

/** The processes the image runs, and `npm start`'s runner; each becomes one file. */
export const PROCESS_ENTRIES = ["src/api/main", "src/supervisor/main", "src/main"] as const;

export type BuildTarget = { root: string; outDir: string; sourceMaps: boolean };

/** tsc with tsconfig.build.json; its report is returned, since the bench builds through type errors. */
export async function compileTypeScript(target: BuildTarget): Promise<{ ok: boolean; report: string }> {
  const tsc = createRequire(import.meta.url).resolve("typescript/bin/tsc");
  const args = [tsc, "-p", join(target.root, "tsconfig.build.json"), "--outDir", target.outDir, "--sourceMap", String(target.sourceMaps)];
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, args, { cwd: target.root, stdio: ["ignore", "pipe", "inherit"] });
    let report = "";
    child.stdout.on("data", (chunk: Buffer) => (report += chunk.toString()));
    child.once("error", reject);
    child.once("exit", (code) => resolve({ ok: code === 0, report }));
  });
}

/** The console page's own files, which tsc does not emit. */
export async function copyConsoleAssets(target: BuildTarget): Promise<void> {
  await cp(join(target.root, "src/console/assets"), join(target.outDir, "src/console/assets"), { recursive: true });
}

/** Each process entry, bundled with every dependency over the file tsc wrote for it. */
export async function bundleProcessEntries(target: BuildTarget): Promise<void> {
  await build({
    absWorkingDir: target.root,
    entryPoints: PROCESS_ENTRIES.map((entry) => ({ in: `${entry}.ts`, out: entry })),
    outdir: target.outDir,
    bundle: true,
    platform: "node",
    format: "esm",
    target: "node20",
    minify: true,
    sourcemap: target.sourceMaps ? "linked" : false,
    // CommonJS dependencies (ws, pino, client-node's) call require(); an ES module has none.
    banner: { js: 'import { createRequire as __runnerRequire } from "node:module"; const require = __runnerRequire(import.meta.url);' },
    logLevel: "warning",
  });
}

/** All three steps; a type error fails the build only when `strict`. */
export async function buildRunner(target: BuildTarget, strict: boolean): Promise<{ typeReport: string }> {
  const compiled = await compileTypeScript(target);
  if (strict && !compiled.ok) throw new Error(`tsc reported errors:\n${compiled.report}`);
  await copyConsoleAssets(target);
  await bundleProcessEntries(target);
  return { typeReport: compiled.ok ? "" : compiled.report };
}
