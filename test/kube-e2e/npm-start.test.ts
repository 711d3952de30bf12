/**
 * `npm start` as a user runs it on a machine with no cluster: the embedded simulated cluster,
 * the api in the main process and the supervisor as a child that is restarted if it dies.
 * Simulator-only: the embedded simulated cluster is what it tests.
 */
import { execFileSync } from "node:child_process";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { RunnerClient } from "../../src/client/index.ts";
import { sessionRoundTrip } from "../support/round-trip.ts";
import { sessionBody } from "../support/session-body.ts";
import { eventsUntil, isStatus } from "../support/streams.ts";
import { startUnconfiguredRunner, type UnconfiguredRunner } from "../support/unconfigured-runner.ts";
import { waitFor } from "../support/wait.ts";

const ROOT = fileURLToPath(new URL("../..", import.meta.url));

describe("npm start", () => {
  let runner: UnconfiguredRunner;
  let client: RunnerClient;

  beforeAll(async () => {
    runner = await startUnconfiguredRunner(["npm", "start", "--silent"], { cwd: ROOT, detached: true });
    client = runner.client;
  });

  afterAll(async () => {
    await runner?.stop();
  });

  it("says loudly that it runs the embedded simulated cluster", () => {
    expect(runner.stderr()).toContain("EMBEDDED SIMULATED CLUSTER");
  });

  it("runs a session end to end", async () => {
    await sessionRoundTrip(client, "from the simulated pod\r\n");
  });

  it("restarts a supervisor that died, which re-adopts the live session", async () => {
    const { sessionId } = await client.createSession(sessionBody());
    await eventsUntil(client, sessionId, isStatus("running"));
    process.kill(descendant(runner.process.pid!, "supervisor/main"), "SIGKILL");
    await waitFor("the session to be back", async () => (await client.getSession(sessionId).catch(() => undefined))?.status.kind === "running" || undefined, 30_000);
    await client.deleteSession(sessionId);
  });

  it("stops every session and exits cleanly on SIGTERM", async () => {
    const { sessionId } = await client.createSession(sessionBody());
    await eventsUntil(client, sessionId, isStatus("running"));
    const exited = new Promise<number | null>((resolve) => runner.process.once("exit", (code) => resolve(code)));
    process.kill(descendant(runner.process.pid!, "src/main.ts"), "SIGTERM");
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
