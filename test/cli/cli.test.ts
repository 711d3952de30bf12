/**
 * The command-line client end to end: the real `k8s-runner` bin against the runner's two
 * processes on a simulated cluster. Simulated pods are scripted with `--simulate`
 * (docs/simulated-cluster.md "Container behaviour"): what they print and the code they exit with.
 */
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { freePort } from "../support/ports.ts";
import { type KubeRunner, startKubeRunner } from "../support/kube-runner.ts";
import { sessionBody } from "../support/session-body.ts";
import { listSessions } from "../../src/cli/list-sessions.ts";
import { jsonLines, runCli, startCli } from "./cli-process.ts";

// A bound on waiting for the runner on a busy machine, not a timing assertion.
const WAIT = { timeout: 30_000 };

let runner: KubeRunner;
let app: string;

beforeAll(async () => {
  runner = await startKubeRunner({ env: { RUNNER_CONSOLE: "true", RUNNER_START_DEADLINE_SECONDS: "10" } });
  app = await mkdtemp(join(tmpdir(), "k8s-runner-cli-app-"));
  await writeFile(join(app, "telo.yaml"), "kind: Telo.Application\nmetadata:\n  name: cli-test\n");
  await writeFile(join(app, "data.bin"), Buffer.from([0xff, 0x00, 0xfe]));
});

afterAll(async () => {
  await runner?.close();
  if (app) await rm(app, { recursive: true, force: true });
});

describe("k8s-runner run", () => {
  it("runs a directory as a session and exits with the app's exit code", async () => {
    const result = await runCli(["run", app, "--simulate", "output=hello from the app\n", "--simulate", "exit-code=3"], {
      url: runner.baseUrl,
    });
    expect(result.stderr).toBe("");
    expect(result.stdout).toContain("hello from the app");
    expect(result.code).toBe(3);
  });

  it("exits 0 when the app does", async () => {
    const result = await runCli(["run", app, "--simulate", "output=fine\n", "--simulate", "exit-code=0"], { url: runner.baseUrl });
    expect(result.stdout).toContain("fine");
    expect(result.code).toBe(0);
  });

  it("forwards stdin to the app's terminal once it runs: the tty echoes and cat prints the line", async () => {
    // The simulated container runs `cat` behind a tty; ^D on an empty line ends it with 0.
    const result = await runCli(["run", app], { url: runner.baseUrl, stdin: "ping\r\x04" });
    expect(result.code).toBe(0);
    // The echo of the typed line, then cat's copy of it.
    expect(result.stdout.split("ping").length - 1).toBeGreaterThanOrEqual(2);
  });

  it("keeps the terminal across an api restart: reopened from the last byte, nothing printed twice", async () => {
    const cli = startCli(["run", app], { url: runner.baseUrl });
    const count = (word: string) => cli.output.stdout.split(word).length - 1;
    // The tty echoes a line, then `cat` prints it: two copies each.
    await expect.poll(async () => (await listSessions(runner.baseUrl)).some((s) => s.status.kind === "running"), WAIT).toBe(true);
    cli.type("before\r");
    await expect.poll(() => count("before"), WAIT).toBe(2);
    await runner.stopApi();
    await runner.startApi();
    cli.type("after\r");
    await expect.poll(() => count("after"), WAIT).toBe(2);
    cli.type("\x04");
    const result = await cli.done;
    expect(result.code).toBe(0);
    expect(count("before")).toBe(2);
  });

  it("sends --telo as the session's version: a known one runs, one too old is the runner's refusal", async () => {
    const ran = await runCli(["run", app, "--telo", "0.96.0", "--simulate", "exit-code=0"], { url: runner.baseUrl });
    expect(ran.code).toBe(0);
    const old = await runCli(["run", app, "--telo", "0.90.0"], { url: runner.baseUrl });
    expect(old.code).not.toBe(0);
    expect(old.stderr).toContain("telo 0.90.0 is not available for app 'app'");
    const refused = await runCli(["run", app, "--telo", "0.96.0", "--image", "x"], { url: runner.baseUrl });
    expect(refused).toMatchObject({ code: 2, stderr: expect.stringContaining("--telo chooses the kernel image") });
  });

  it("prints one JSON object per line under --json: the session, its events, the output, the exit", async () => {
    const result = await runCli(["run", app, "--json", "--simulate", "output=json out\n", "--simulate", "exit-code=7"], {
      url: runner.baseUrl,
    });
    expect(result.code).toBe(7);
    const lines = jsonLines(result.stdout);
    expect(lines[0]).toMatchObject({ type: "session", sessionId: expect.stringMatching(/^[a-z2-7]{12}$/) });
    const statuses = lines.filter((l) => l.type === "event").map((l) => (l.event as { status?: { kind: string } }).status?.kind);
    expect(statuses).toContain("running");
    // A non-zero exit is reported `failed` with the code in its message (docs/kubernetes.md "Ends and failure messages").
    expect(statuses.at(-1)).toBe("failed");
    const output = lines.filter((l) => l.type === "output").map((l) => l.data).join("");
    expect(output).toContain("json out");
    expect(lines.at(-1)).toMatchObject({ type: "exit", code: 7, status: { kind: "failed" } });
  });

  it("names a failed start on stderr and exits 1", async () => {
    const result = await runCli(["run", app, "--image", "registry.example/nonexistent:1", "--pull", "never"], { url: runner.baseUrl });
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(/^k8s-runner: session failed: .+/m);
  });

  it("refuses a directory without the entry file with one line", async () => {
    const result = await runCli(["run", app, "--entry", "missing.yaml"], { url: runner.baseUrl });
    expect(result.code).toBe(1);
    expect(result.stderr).toBe(`k8s-runner: ${app} has no missing.yaml (name the entry file with --entry)\n`);
  });
});

describe("k8s-runner on existing sessions", () => {
  it("lists sessions and stops one", async () => {
    const { sessionId } = await runner.client.createSession(sessionBody({ simulate: { "run-ms": 600_000 } }));
    const listed = await runCli(["sessions", "--json"], { url: runner.baseUrl });
    expect(listed.code).toBe(0);
    const { sessions } = JSON.parse(listed.stdout) as { sessions: Array<{ sessionId: string }> };
    expect(sessions.map((s) => s.sessionId)).toContain(sessionId);
    const table = await runCli(["sessions"], { url: runner.baseUrl });
    expect(table.stdout).toMatch(/^ID\s+MODE\s+STATUS\s+CREATED\s+APPS$/m);
    expect(table.stdout).toMatch(new RegExp(`^${sessionId}\\s+run\\s+\\w+`, "m"));

    const stopped = await runCli(["stop", sessionId], { url: runner.baseUrl });
    expect(stopped).toEqual({ code: 0, stdout: `stopped ${sessionId}\n`, stderr: "" });
    await expect.poll(async () => (await runner.client.getSession(sessionId)).status.kind, WAIT).toBe("stopped");
  });

  it("logs prints an ended session's output and exits 0", async () => {
    const { sessionId } = await runner.client.createSession(sessionBody({ simulate: { output: "kept output\n", "exit-code": 4 } }));
    await expect.poll(async () => (await runner.client.getSession(sessionId)).status.kind, WAIT).toBe("failed");
    const printed = await runCli(["logs", sessionId], { url: runner.baseUrl });
    expect(printed).toMatchObject({ code: 0, stderr: "" });
    expect(printed.stdout).toContain("kept output");
  });

  it("attach forwards stdin from running on and exits with the app's code", async () => {
    // Still starting when the CLI attaches: stdin sent now would be dropped by the runner.
    const { sessionId } = await runner.client.createSession(sessionBody({ simulate: { "start-delay-ms": 5000 } }));
    const result = await runCli(["attach", sessionId], { url: runner.baseUrl, stdin: "typed\r\x04" });
    expect(result.code).toBe(0);
    expect(result.stdout).toContain("typed");
  });

  it("answers an unknown session with the runner's message and exit 1", async () => {
    const result = await runCli(["logs", "aaaaaaaaaaaa"], { url: runner.baseUrl });
    expect(result.code).toBe(1);
    expect(result.stderr).toBe("k8s-runner: runner returned HTTP 404: session 'aaaaaaaaaaaa' not in registry\n");
  });
});

describe("k8s-runner probe and capabilities", () => {
  it("probe exits 0 for a ready image and prints the report", async () => {
    const result = await runCli(["probe", "--image", "telorun/node:latest-slim", "--json"], { url: runner.baseUrl });
    expect(result.code).toBe(0);
    expect(JSON.parse(result.stdout)).toEqual({ status: "ready" });
  });

  it("capabilities prints the document as JSON or as a summary", async () => {
    const json = await runCli(["capabilities", "--json"], { url: runner.baseUrl });
    expect(JSON.parse(json.stdout)).toMatchObject({ displayName: "Telo Runner", features: { io: ["tty", "streams"] } });
    const human = await runCli(["capabilities"], { url: runner.baseUrl });
    expect(human.stdout).toMatch(/^Telo Runner: /);
    expect(human.stdout).toContain("default image: telorun/node:latest-slim");
  });
});

describe("k8s-runner usage errors", () => {
  it("exits 2 with one line naming the problem", async () => {
    const unknown = await runCli(["frobnicate"]);
    expect(unknown.code).toBe(2);
    expect(unknown.stderr.split("\n")[0]).toBe("k8s-runner: unknown command 'frobnicate'");
    const missing = await runCli(["stop"]);
    expect(missing).toMatchObject({ code: 2, stderr: expect.stringMatching(/^k8s-runner: 'stop' needs <id>\n/) });
  });

  it("says so when the runner is not there", async () => {
    const url = `http://127.0.0.1:${await freePort()}`;
    const result = await runCli(["capabilities"], { url });
    expect(result).toMatchObject({ code: 1, stderr: `k8s-runner: cannot reach the runner at ${url} (ECONNREFUSED)\n` });
  });
});
