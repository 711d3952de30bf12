/**
 * The runner as the image runs it: `npm run build`'s output (src/release/build.ts), where each
 * process entry is one bundled file. Started as `node dist/src/main.js` on the embedded
 * simulated cluster, it must find what it resolves at run time from its bundled place (the
 * supervisor entry it forks, the embedded cluster's entry, the console's files, the version).
 */
import { type ChildProcess, spawn } from "node:child_process";
import { mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { RunnerClient } from "../../src/client/index.ts";
import { buildRunner, PROCESS_ENTRIES } from "../../src/release/build.ts";
import { RUNNER_VERSION } from "../../src/version.ts";
import { freePort } from "../support/ports.ts";
import { sessionBody } from "../support/session-body.ts";
import { eventsUntil, framesUntilText, isStatus, textOf } from "../support/streams.ts";
import { waitFor } from "../support/wait.ts";

const ROOT = fileURLToPath(new URL("../..", import.meta.url));
/** Inside the checkout, so the compiled files resolve its node_modules and package.json. */
const OUT = join(ROOT, ".tmp", `compiled-runner-${process.pid}`);

describe("the compiled runner", () => {
  let runner: ChildProcess;
  let client: RunnerClient;
  let home: string;
  let stderr = "";

  beforeAll(async () => {
    await buildRunner({ root: ROOT, outDir: OUT, sourceMaps: false }, true);
    home = await mkdtemp(join(tmpdir(), "k8s-runner-compiled-"));
    const [port, bundlePort] = [await freePort(), await freePort()];
    runner = spawn(process.execPath, [join(OUT, "src/main.js")], {
      cwd: home,
      env: {
        PATH: process.env.PATH ?? "",
        HOME: home,
        PORT: String(port),
        RUNNER_BUNDLE_PORT: String(bundlePort),
        RUNNER_INTERNAL_SOCKET: join(home, "supervisor.sock"),
        RUNNER_CONSOLE: "true",
        LOG_LEVEL: "warn",
      },
      stdio: ["ignore", "ignore", "pipe"],
    });
    runner.stderr?.on("data", (chunk: Buffer) => (stderr += chunk.toString()));
    client = new RunnerClient(`http://127.0.0.1:${port}`);
    await waitFor("the compiled runner to serve", async () => (await fetch(`${client.baseUrl}/v1/sessions/none`)).status === 404 || undefined, 60_000);
  }, 180_000);

  it("starts on the embedded simulated cluster and says so", () => {
    expect(stderr).toContain("EMBEDDED SIMULATED CLUSTER");
  });

  afterAll(async () => {
    if (runner?.exitCode === null) {
      const exited = new Promise((resolve) => runner.once("exit", resolve));
      runner.kill("SIGTERM");
      await exited;
    }
    await rm(OUT, { recursive: true, force: true });
    if (home) await rm(home, { recursive: true, force: true });
  });

  it("bundles each process entry into one file that imports no module of the runner's own", async () => {
    for (const entry of PROCESS_ENTRIES) {
      const code = await readFile(join(OUT, `${entry}.js`), "utf8");
      expect({ entry, relativeImports: code.match(/(?:from|import\()\s*["']\.{1,2}\/[^"']*["']/g) ?? [] }).toEqual({ entry, relativeImports: [] });
    }
  });

  it("runs a session end to end through the supervisor it forked", async () => {
    const { sessionId } = await client.createSession(sessionBody({ simulate: { output: "compiled\r\n" } }));
    await eventsUntil(client, sessionId, isStatus("running"));
    const terminal = client.terminal(sessionId);
    await terminal.send("typed\r");
    expect(textOf(await framesUntilText(terminal, "typed"))).toContain("typed");
    terminal.close();
    await client.deleteSession(sessionId);
    await eventsUntil(client, sessionId, isStatus("stopped"));
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
