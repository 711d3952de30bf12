/**
 * The package as its users install it (docs/package.md): the clone packed, the tarball installed
 * into an empty project with production dependencies only, and everything docs/clients.md and
 * docs/testing-your-apps.md promise done from there, their examples taken from the pages.
 */
import { execFileSync } from "node:child_process";
import { copyFile, mkdir, mkdtemp, readFile, readdir, rm, writeFile } from "node:fs/promises";
import { existsSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { REPO_ROOT } from "../deploy/render.ts";
import { freePort } from "../support/ports.ts";
import { waitFor } from "../support/wait.ts";
import { codeBlock, exitOf, node, npm, packClone, PATH, start, type Started } from "./host-project.ts";

const FIXTURES = fileURLToPath(new URL("./host/", import.meta.url));
const PEERS = ["hono", "@hono/node-server@1", "@hono/node-ws"];
const VITEST_VERSION = (JSON.parse(await readFile(join(REPO_ROOT, "node_modules/vitest/package.json"), "utf8")) as { version: string }).version;

let scratch: string;
let host: string;
let packed: Awaited<ReturnType<typeof packClone>>;
const started: Started[] = [];

/** A process of the installed package's bin, its HOME empty so no cluster is found. */
async function runnerProcess(command: "serve" | "supervisor", env: Record<string, string>): Promise<Started> {
  const home = await mkdtemp(join(scratch, `${command}-home-`));
  const launched = start(join(host, "node_modules/.bin/k8s-runner"), [command], { cwd: host, env: { PATH, HOME: home, LOG_LEVEL: "warn", ...env } });
  started.push(launched);
  return launched;
}

async function ready(url: string, of: Started): Promise<void> {
  await waitFor(
    `${url}/v1/ready`,
    async () => {
      if (of.child.exitCode !== null) throw new Error(`exited ${of.child.exitCode}:\n${of.output()}`);
      return (await fetch(`${url}/v1/ready`).catch(() => undefined))?.ok;
    },
    120_000,
  );
}

function driveOutcome(answer: string) {
  return JSON.parse(answer) as { output: string; statuses: string[]; session: { status: unknown }; withoutEnv: { status: number; body: { message: string } } };
}

beforeAll(async () => {
  scratch = await mkdtemp(join(tmpdir(), "k8s-runner-package-"));
  packed = await packClone(scratch);
  host = join(scratch, "host");
  await mkdir(host);
  await writeFile(join(host, "package.json"), JSON.stringify({ name: "host", version: "1.0.0", private: true, type: "module" }));
  await npm(host, ["install", "--omit=dev", packed.tarball, ...PEERS]);
  // Run from inside the project, so that it resolves the installed package.
  await copyFile(join(FIXTURES, "drive.mjs"), join(host, "drive.mjs"));
}, 900_000);

afterAll(async () => {
  await Promise.all(started.map((launched) => launched.stop()));
  if (scratch) await rm(scratch, { recursive: true, force: true });
});

describe("the tarball", () => {
  it("holds the build, its declarations and the license, and no tests, benchmarks, docs or sources", () => {
    const files = execFileSync("tar", ["-tzf", packed.tarball], { encoding: "utf8" }).trim().split("\n").map((path) => path.replace(/^package\//, ""));
    const stray = files.filter((path) => /^(test|bench|docs|k8s|handlers)\//.test(path) || path.endsWith(".map") || (/\.ts$/.test(path) && !path.endsWith(".d.ts")) || (path.startsWith("src/") && path !== "src/cli/bin.mjs"));
    expect(stray).toEqual([]);
    for (const file of ["LICENSE", "dist/src/index.d.ts", "dist/src/client/index.d.ts", "dist/src/testing/index.d.ts", "dist/src/main.js", "dist/src/supervisor/main.js", "dist/src/launch/local-cluster-main.js", "dist/src/console/assets/console.js"]) {
      expect(files).toContain(file);
    }
    // docs/package.md gives the measured figures; these bounds keep the package small.
    expect({ bytes: packed.size < 2 * 1024 * 1024, files: packed.entryCount < 800 }).toEqual({ bytes: true, files: true });
  });

  it("declares a license and no install scripts, and is publishable", async () => {
    const manifest = JSON.parse(await readFile(join(host, "node_modules/k8s-runner/package.json"), "utf8")) as Record<string, unknown> & { scripts: Record<string, string> };
    expect({ license: manifest.license, private: manifest.private }).toEqual({ license: "Apache-2.0", private: undefined });
    expect(Object.keys(manifest.scripts).filter((name) => /^(pre|post)?install$|^prepare$/.test(name))).toEqual([]);
  });

  it("installs without the development dependencies", async () => {
    const installed = await readdir(join(host, "node_modules"));
    expect(installed.filter((name) => ["tsx", "typescript", "esbuild", "vitest", "fast-check"].includes(name))).toEqual([]);
  });
});

describe("the installed package", () => {
  it("imports its three entries", async () => {
    const script = 'const m = (p) => import(p).then((x) => Object.keys(x).sort()); console.log(JSON.stringify([await m("k8s-runner"), await m("k8s-runner/client"), await m("k8s-runner/testing")]))';
    const [main, client, testing] = JSON.parse(await node(host, ["--input-type=module", "-e", script])) as string[][];
    expect(main).toEqual(expect.arrayContaining(["createRunnerRoutes", "SupervisorClient", "RunnerClient", "createLogger"]));
    expect(client).toEqual(["RunnerClient", "RunnerError", "Terminal"]);
    expect(testing).toEqual(["startTestRunner"]);
  });

  it("type-checks the docs' examples as a strict nodenext consumer", async () => {
    // vitest is the example test's own dependency, as it would be in a user's project.
    await npm(host, ["install", "--save-dev", `vitest@${VITEST_VERSION}`]);
    await writeFile(join(host, "client-example.mts"), codeBlock("docs/clients.md", "Typed client"));
    await writeFile(join(host, "embed.mts"), codeBlock("docs/clients.md", "Embedding the routes in another Hono server"));
    await writeFile(join(host, "runner.test.ts"), codeBlock("docs/testing-your-apps.md", "An example (vitest)"));
    for (const fixture of ["tsconfig.json", "not-any.mts"]) await copyFile(join(FIXTURES, fixture), join(host, fixture));
    const tsc = join(REPO_ROOT, "node_modules/typescript/bin/tsc");
    const checked = await node(host, [tsc, "-p", "tsconfig.json"]).then(() => "ok", (error: { stdout?: string }) => error.stdout ?? String(error));
    expect(checked).toBe("ok");
  }, 300_000);

  it("lists every command in --help, through npx", () => {
    const help = execFileSync("npx", ["--no-install", "k8s-runner", "--help"], { cwd: host, env: { ...process.env, PATH }, encoding: "utf8", timeout: 120_000 });
    for (const command of ["serve", "supervisor", "run <dir>", "sessions", "logs <id>", "attach <id>", "stop <id>", "probe", "capabilities"]) {
      expect(help).toMatch(new RegExp(`^  ${command} `, "m"));
    }
  });

  it("serves with `k8s-runner serve` on the embedded simulated cluster, and a session exits 0 through the installed client", async () => {
    const port = await freePort();
    const runner = await runnerProcess("serve", { PORT: String(port), RUNNER_INTERNAL_SOCKET: join(scratch, "serve.sock"), RUNNER_CONSOLE: "true" });
    const url = `http://127.0.0.1:${port}`;
    await ready(url, runner);
    expect(runner.output()).toContain("EMBEDDED SIMULATED CLUSTER");
    const outcome = driveOutcome(await node(host, ["drive.mjs", url]));
    expect(outcome.output).toContain("hello from the package");
    expect(outcome.statuses).toEqual(expect.arrayContaining(["running", "exited"]));
    expect(outcome.session.status).toEqual({ kind: "exited", code: 0 });
    expect(outcome.withoutEnv).toMatchObject({ status: 400, body: { message: "body must have required property 'env'" } });
    // The rest of docs/clients.md from the installed package: the console's files and the CLI on them.
    for (const path of ["/console/", "/console/assets/console.js", "/console/assets/xterm.mjs"]) {
      expect({ path, status: (await fetch(`${url}${path}`)).status }).toEqual({ path, status: 200 });
    }
    const cli = (...args: string[]) => execFileSync(join(host, "node_modules/.bin/k8s-runner"), [...args, "--url", url], { cwd: host, env: { PATH }, encoding: "utf8", timeout: 120_000 });
    const { sessionId } = JSON.parse(cli("sessions", "--json")).sessions[0] as { sessionId: string };
    expect(cli("logs", sessionId)).toContain("hello from the package");
    runner.child.kill("SIGTERM");
    expect(await exitOf(runner.child)).toBe(0);
  }, 300_000);

  it("runs docs/clients.md's embedding example against `k8s-runner supervisor`, events and terminal through the host's routes", async () => {
    const socket = join(scratch, "embedded.sock");
    const supervisor = await runnerProcess("supervisor", { RUNNER_INTERNAL_SOCKET: socket });
    await writeFile(join(host, "embed.mjs"), codeBlock("docs/clients.md", "Embedding the routes in another Hono server"));
    const port = await freePort();
    const embedding = start(process.execPath, ["embed.mjs"], { cwd: host, env: { PATH, RUNNER_INTERNAL_SOCKET: socket, PORT: String(port) } });
    started.push(embedding);
    const base = `http://127.0.0.1:${port}/runner`;
    await waitFor("the host's runner routes to be ready", async () => {
      for (const launched of [supervisor, embedding]) if (launched.child.exitCode !== null) throw new Error(`exited ${launched.child.exitCode}:\n${launched.output()}`);
      return (await fetch(`${base}/v1/ready`).catch(() => undefined))?.ok;
    }, 120_000);
    expect(await (await fetch(`http://127.0.0.1:${port}/`)).text()).toBe("the host's own page");
    const outcome = driveOutcome(await node(host, ["drive.mjs", base]));
    expect({ output: outcome.output.includes("hello from the package"), status: outcome.session.status }).toEqual({ output: true, status: { kind: "exited", code: 0 } });
    expect(outcome.statuses).toEqual(expect.arrayContaining(["running", "exited"]));
  }, 300_000);

  it("runs docs/testing-your-apps.md's vitest example with k8s-runner/testing, leaving no runner directory", async () => {
    // Written by the type-check above; written again so this test stands alone.
    await writeFile(join(host, "runner.test.ts"), codeBlock("docs/testing-your-apps.md", "An example (vitest)"));
    if (!existsSync(join(host, "node_modules/vitest"))) await npm(host, ["install", "--save-dev", `vitest@${VITEST_VERSION}`]);
    const runnerTmp = await mkdtemp(join(scratch, "vitest-tmp-"));
    const result = await node(host, [join(host, "node_modules/vitest/vitest.mjs"), "run", "runner.test.ts"], { TMPDIR: runnerTmp, HOME: runnerTmp, CI: "1" }, 240_000).catch(
      (error: { stdout?: string; stderr?: string }) => `${error.stdout ?? ""}${error.stderr ?? String(error)}`,
    );
    expect(result).toMatch(/1 passed/);
    expect((await readdir(runnerTmp)).filter((name) => name.startsWith("k8s-runner-test-"))).toEqual([]);
  }, 300_000);
});
