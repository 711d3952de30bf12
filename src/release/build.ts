/**
 * The runner as its image runs it (`npm run build`). tsc compiles src/ and handlers/ into
 * `<out>/` (the package's library surface, the CLI, the embedded cluster's entry), the console
 * page's files are copied beside their module, and then each process entry is bundled over its
 * own compiled file, tree-shaken and minified. What an entry loads at start is in its own file; code
 * imported only on demand, and code two entries share, is in files of their own under
 * `<out>/src/chunks/`, so a process parses only what it runs (the tracing SDK only when tracing is
 * on) and the api's files hold nothing the supervisor alone uses.
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
import { build, type Metafile } from "esbuild";

/** The processes the image runs, and `npm start`'s runner; each becomes one entry file. */
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

/** Each process entry, bundled with every dependency over the file tsc wrote for it; esbuild's account of which module went into which file is returned. */
export async function bundleProcessEntries(target: BuildTarget): Promise<Metafile> {
  const { metafile } = await build({
    absWorkingDir: target.root,
    entryPoints: PROCESS_ENTRIES.map((entry) => ({ in: `${entry}.ts`, out: entry })),
    outdir: target.outDir,
    bundle: true,
    // Code loaded on demand (the tracing SDK, imported only when tracing is on) and code the
    // entries share go to files of their own under src/chunks/: V8 parses a whole file when it is
    // loaded, and the memory that parse takes stays with the process (docs/benchmarks-relay.md).
    splitting: true,
    chunkNames: "src/chunks/[name]-[hash]",
    platform: "node",
    format: "esm",
    target: "node20",
    minify: true,
    sourcemap: target.sourceMaps ? "linked" : false,
    // CommonJS dependencies (ws, pino, client-node's) call require(); an ES module has none.
    banner: { js: 'import { createRequire as __runnerRequire } from "node:module"; const require = __runnerRequire(import.meta.url);' },
    logLevel: "warning",
    metafile: true,
  });
  return metafile;
}

/** All three steps; a type error fails the build only when `strict`. */
export async function buildRunner(target: BuildTarget, strict: boolean): Promise<{ typeReport: string; bundles: Metafile }> {
  const compiled = await compileTypeScript(target);
  if (strict && !compiled.ok) throw new Error(`tsc reported errors:\n${compiled.report}`);
  await copyConsoleAssets(target);
  const bundles = await bundleProcessEntries(target);
  return { typeReport: compiled.ok ? "" : compiled.report, bundles };
}
