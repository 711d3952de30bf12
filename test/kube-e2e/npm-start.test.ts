/**
 * `npm start` as a user runs it on a machine with no cluster: the embedded simulated cluster,
 * the api in the main process and the supervisor as a child that is restarted if it dies.
 * Simulator-only: the embedded simulated cluster is what it tests.
 */
import { type ChildProcess, execFileSync, spawn } from "node:child_process";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { RunnerClient } from "../../src/client/index.ts";
import { freePort } from "../support/ports.ts";
import { waitFor } from "../support/wait.ts";
import { sessionBody } from "../support/session-body.ts";
import { eventsUntil, framesUntilText, isStatus, textOf } from "../support/streams.ts";

const ROOT = fileURLToPath(new URL("../..", import.meta.url));

describe("npm start", () => {
  let runner: ChildProcess;
  let client: RunnerClient;
  let home: string;
  let stderr = "";

  beforeAll(async () => {
    home = await mkdtemp(join(tmpdir(), "k8s-runner-home-"));
    const [port, bundlePort] = [await freePort(), await freePort()];
    runner = spawn("npm", ["start", "--silent"], {
      cwd: ROOT,
      // A HOME without ~/.kube/config and no KUBECONFIG: no cluster is configured.
      env: {
        PATH: process.env.PATH ?? "",
        HOME: home,
        PORT: String(port),
        RUNNER_BUNDLE_PORT: String(bundlePort),
        RUNNER_INTERNAL_SOCKET: join(home, "supervisor.sock"),
        LOG_LEVEL: "warn",
      },
      stdio: ["ignore", "ignore", "pipe"],
      detached: true,
    });
    runner.stderr?.on("data", (chunk: Buffer) => (stderr += chunk.toString()));
    client = new RunnerClient(`http://127.0.0.1:${port}`);
    await waitFor("npm start to serve", async () => (await fetch(`${client.baseUrl}/v1/sessions/none`)).status === 404 || undefined, 60_000);
  });

  afterAll(async () => {
    if (runner.exitCode === null) {
      const exited = new Promise((resolve) => runner.once("exit", resolve));
      process.kill(-runner.pid!, "SIGTERM");
      await exited;
    }
    await rm(home, { recursive: true, force: true });
  });

  it("says loudly that it runs the embedded simulated cluster", () => {
    expect(stderr).toContain("EMBEDDED SIMULATED CLUSTER");
  });

  it("runs a session end to end", async () => {
    const { sessionId } = await client.createSession(sessionBody({ simulate: { output: "from the simulated pod\r\n" } }));
    await eventsUntil(client, sessionId, isStatus("running"));
    const terminal = client.terminal(sessionId);
    await terminal.send("typed\r");
    expect(textOf(await framesUntilText(terminal, "typed"))).toContain("typed");
    terminal.close();
    await client.deleteSession(sessionId);
    await eventsUntil(client, sessionId, isStatus("stopped"));
  });

  it("restarts a supervisor that died, which re-adopts the live session", async () => {
    const { sessionId } = await client.createSession(sessionBody());
    await eventsUntil(client, sessionId, isStatus("running"));
    process.kill(descendant(runner.pid!, "supervisor/main"), "SIGKILL");
    await waitFor("the session to be back", async () => (await client.getSession(sessionId).catch(() => undefined))?.status.kind === "running" || undefined, 30_000);
    await client.deleteSession(sessionId);
  });

  it("stops every session and exits cleanly on SIGTERM", async () => {
    const { sessionId } = await client.createSession(sessionBody());
    await eventsUntil(client, sessionId, isStatus("running"));
    const exited = new Promise<number | null>((resolve) => runner.once("exit", (code) => resolve(code)));
    process.kill(descendant(runner.pid!, "src/main.ts"), "SIGTERM");
    expect(await exited).toBe(0);
  });
});

/** The pid of the process below `root` whose command line mentions `marker` (npm → node → …). */
function descendant(root: number, marker: string): number {
  const rows = execFileSync("ps", ["-e", "-o", "pid=,ppid=,args="]).toString().trim().split("\n");
  const processes = rows.map((row) => {
    const [pid, ppid, ...args] = row.trim().split(/\s+/);
    return { pid: Number(pid), ppid: Number(ppid), args: args.join(" ") };
  });
  const below = new Set([root]);
  for (let grew = true; grew; ) {
    grew = false;
    for (const entry of processes) {
      if (below.has(entry.ppid) && !below.has(entry.pid)) {
        below.add(entry.pid);
        grew = true;
      }
    }
  }
  const found = processes.find((entry) => below.has(entry.pid) && entry.args.startsWith(process.execPath) && entry.args.includes(marker));
  if (!found) throw new Error(`no process below ${root} runs ${marker}`);
  return found.pid;
}
