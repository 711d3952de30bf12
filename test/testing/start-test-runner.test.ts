/**
 * `k8s-runner/testing` from the source: runners started side by side on the embedded simulated
 * cluster, a scripted session through each one's typed client, and nothing left behind by
 * `stop()`, by a runner that failed to start, or by a test process killed outright.
 */
import { spawn } from "node:child_process";
import { existsSync, readdirSync } from "node:fs";
import { connect } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createInterface } from "node:readline";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { startTestRunner, type TestRunner } from "../../src/testing/index.ts";
import { DIRECTORY_PREFIX, removeAbandonedDirectories } from "../../src/testing/leftovers.ts";
import { liveMembers } from "../../src/testing/process-group.ts";
import { sessionBody } from "../support/session-body.ts";
import { eventsUntil, isStatus } from "../support/streams.ts";
import { waitFor } from "../support/wait.ts";

const HERE = fileURLToPath(new URL(".", import.meta.url));

const runnerDirectories = () => readdirSync(tmpdir()).filter((name) => name.startsWith(DIRECTORY_PREFIX));
const groupAlive = async (pid: number) => (await liveMembers(pid)).length > 0;

const portOpen = (url: string) =>
  new Promise<boolean>((resolve) => {
    const socket = connect(Number(new URL(url).port), "127.0.0.1");
    socket.once("connect", () => (socket.destroy(), resolve(true)));
    socket.once("error", () => resolve(false));
  });

async function exitsWith(runner: TestRunner, code: number): Promise<void> {
  const { sessionId } = await runner.client.createSession(sessionBody({ simulate: { output: "done\n", "exit-code": code, "run-ms": 300 } }));
  await eventsUntil(runner.client, sessionId, isStatus("exited"));
  expect(await runner.client.getSession(sessionId)).toMatchObject({ status: { kind: "exited", code } });
}

describe("startTestRunner", () => {
  it("starts runners side by side that never meet, and stop() leaves no process, socket, directory or port", async () => {
    const runners = await Promise.all([startTestRunner(), startTestRunner()]);
    try {
      expect(new Set(runners.map((runner) => runner.url)).size).toBe(2);
      expect(new Set(runners.map((runner) => runner.directory)).size).toBe(2);
      for (const runner of runners) expect(existsSync(join(runner.directory, "supervisor.sock"))).toBe(true);
      expect(runners[0]!.logs()).toContain("EMBEDDED SIMULATED CLUSTER");
      await Promise.all(runners.map((runner) => exitsWith(runner, 0)));
    } finally {
      await Promise.all(runners.map((runner) => runner.stop()));
    }
    for (const runner of runners) {
      expect({ group: await groupAlive(runner.pid), directory: existsSync(runner.directory), port: await portOpen(runner.url) }).toEqual({ group: false, directory: false, port: false });
    }
    await runners[0]!.stop(); // a second stop is harmless
  }, 180_000);

  it("refuses bad options before starting anything", async () => {
    await expect(startTestRunner({ startTimeoutMs: -1 })).rejects.toThrow(/startTestRunner: startTimeoutMs: /);
    await expect(startTestRunner({ bogus: true } as never)).rejects.toThrow(TypeError);
  });

  it("rejects a runner that cannot start, with its reason, and removes its directory", async () => {
    const before = runnerDirectories();
    const failed = startTestRunner({ env: { RUNNER_MAX_SESSIONS: "many" } });
    await expect(failed).rejects.toThrow(/did not start: it exited \(code 2[\s\S]*RUNNER_MAX_SESSIONS/);
    expect(runnerDirectories()).toEqual(before);
  }, 60_000);

  it("ends the runner with a test process killed outright; the next start removes its directory", async () => {
    const holder = spawn(process.execPath, ["--import", "tsx", join(HERE, "hold-runner.ts")], { stdio: ["ignore", "pipe", "inherit"] });
    const line = await new Promise<string>((resolve) => createInterface({ input: holder.stdout! }).once("line", resolve));
    const { pid, directory } = JSON.parse(line) as { pid: number; directory: string };
    expect(await groupAlive(pid)).toBe(true);
    holder.kill("SIGKILL");
    await waitFor("the runner's processes to end with their parent", async () => !(await groupAlive(pid)), 30_000);
    await waitFor("the holder to be reaped", () => holder.exitCode !== null || holder.signalCode !== null);
    expect(existsSync(directory)).toBe(true);
    await removeAbandonedDirectories();
    expect(existsSync(directory)).toBe(false);
  }, 120_000);
});
