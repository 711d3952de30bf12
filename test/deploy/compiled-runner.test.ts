/**
 * The runner as the image runs it: `npm run build`'s output (src/release/build.ts), where each
 * process entry is bundled, with what it loads on demand or shares with another entry in chunk
 * files beside it. Started as `node dist/src/main.js` on the embedded
 * simulated cluster, it must find what it resolves at run time from its bundled place (the
 * supervisor entry it forks, the embedded cluster's entry, the console's files, the version).
 */
import { readFile, rm } from "node:fs/promises";
import { dirname, join, relative, resolve } from "node:path";
import type { Metafile } from "esbuild";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { RunnerClient } from "../../src/client/index.ts";
import { buildRunner, PROCESS_ENTRIES } from "../../src/release/build.ts";
import { RUNNER_VERSION } from "../../src/version.ts";
import { sessionRoundTrip } from "../support/round-trip.ts";
import { startUnconfiguredRunner, type UnconfiguredRunner } from "../support/unconfigured-runner.ts";

const ROOT = fileURLToPath(new URL("../..", import.meta.url));
/** Inside the checkout, so the compiled files resolve its node_modules and package.json. */
const OUT = join(ROOT, ".tmp", `compiled-runner-${process.pid}`);
const RELATIVE_IMPORT = /(?:from|import\(?)\s*["'](\.{1,2}\/[^"']*)["']/g;

/** Every file of ours a process entry can load, static or on demand, read from the files on disk. */
async function filesLoadedFrom(entryFile: string): Promise<string[]> {
  const seen = new Set<string>();
  const queue = [entryFile];
  while (queue.length > 0) {
    const file = queue.pop()!;
    if (seen.has(file)) continue;
    seen.add(file);
    for (const match of (await readFile(file, "utf8")).matchAll(RELATIVE_IMPORT)) queue.push(resolve(dirname(file), match[1]!));
  }
  return [...seen].map((file) => relative(OUT, file)).sort();
}

/** The source modules in every output file an entry can load, from esbuild's account of the build. */
function modulesBundledFor(bundles: Metafile, entry: string): string[] {
  const outputOf = (file: string) => relative(ROOT, join(OUT, file));
  const seen = new Set<string>();
  const queue = [outputOf(`${entry}.js`)];
  while (queue.length > 0) {
    const output = queue.pop()!;
    if (seen.has(output)) continue;
    seen.add(output);
    for (const imported of bundles.outputs[output]!.imports) if (!imported.external) queue.push(imported.path);
  }
  return [...seen].flatMap((output) => Object.keys(bundles.outputs[output]!.inputs));
}

describe("the compiled runner", () => {
  let runner: UnconfiguredRunner;
  let client: RunnerClient;
  let bundles: Metafile;

  beforeAll(async () => {
    ({ bundles } = await buildRunner({ root: ROOT, outDir: OUT, sourceMaps: false }, true));
    runner = await startUnconfiguredRunner([process.execPath, join(OUT, "src/main.js")], { cwd: OUT, env: { RUNNER_CONSOLE: "true" } });
    client = runner.client;
  }, 180_000);

  afterAll(async () => {
    await runner?.stop();
    await rm(OUT, { recursive: true, force: true });
  });

  it("starts on the embedded simulated cluster and says so", () => {
    expect(runner.stderr()).toContain("EMBEDDED SIMULATED CLUSTER");
  });

  it("loads each process entry from its bundle's files only, never from tsc's module by module", async () => {
    for (const entry of PROCESS_ENTRIES) {
      const files = await filesLoadedFrom(join(OUT, `${entry}.js`));
      expect({ entry, outsideTheBundle: files.filter((file) => file !== `${entry}.js` && !file.startsWith("src/chunks/")) }).toEqual({ entry, outsideTheBundle: [] });
    }
    // The tracing SDK is a chunk of its own, loaded only when tracing is on (docs/tracing.md).
    expect(await filesLoadedFrom(join(OUT, "src/supervisor/main.js"))).toContainEqual(expect.stringMatching(/^src\/chunks\/tracing-sdk-/));
  });

  it("gives the api's processes no Kubernetes client and no simulator, even in the chunks they share with the supervisor", () => {
    const clusterCode = /^(node_modules\/@kubernetes\/|src\/kube\/|src\/sim\/)/;
    for (const entry of ["src/api/main", "src/main"]) {
      expect({ entry, clusterCode: modulesBundledFor(bundles, entry).filter((module) => clusterCode.test(module)) }).toEqual({ entry, clusterCode: [] });
    }
    // The same reading finds what is there.
    expect(modulesBundledFor(bundles, "src/api/main")).toContain("src/api/server.ts");
    expect(modulesBundledFor(bundles, "src/supervisor/main").filter((module) => module.startsWith("node_modules/@kubernetes/client-node/")).length).toBeGreaterThan(0);
  });

  it("runs a session end to end through the supervisor it forked", async () => {
    await sessionRoundTrip(client, "compiled\r\n");
  });

  it("serves the console's own files and xterm.js from the installed package", async () => {
    for (const path of ["/console/", "/console/assets/console.js", "/console/assets/xterm.mjs"]) {
      const answer = await fetch(`${client.baseUrl}${path}`);
      expect({ path, status: answer.status }).toEqual({ path, status: 200 });
      expect((await answer.arrayBuffer()).byteLength).toBeGreaterThan(0);
    }
  });

  it("reports the package's version", async () => {
    const answer = await fetch(`${client.baseUrl}/v1/health`);
    expect(await answer.json()).toEqual({ ok: true, version: RUNNER_VERSION });
  });
});
