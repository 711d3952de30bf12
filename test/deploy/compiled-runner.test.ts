/**
 * The runner as the image runs it: `npm run build`'s output (src/release/build.ts), where each
 * process entry is one bundled file. Started as `node dist/src/main.js` on the embedded
 * simulated cluster, it must find what it resolves at run time from its bundled place (the
 * supervisor entry it forks, the embedded cluster's entry, the console's files, the version).
 */
import { readFile, rm } from "node:fs/promises";
import { join } from "node:path";
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

describe("the compiled runner", () => {
  let runner: UnconfiguredRunner;
  let client: RunnerClient;

  beforeAll(async () => {
    await buildRunner({ root: ROOT, outDir: OUT, sourceMaps: false }, true);
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

  it("bundles each process entry into one file that imports no module of the runner's own", async () => {
    for (const entry of PROCESS_ENTRIES) {
      const code = await readFile(join(OUT, `${entry}.js`), "utf8");
      expect({ entry, relativeImports: code.match(/(?:from|import\()\s*["']\.{1,2}\/[^"']*["']/g) ?? [] }).toEqual({ entry, relativeImports: [] });
    }
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
