/**
 * `npm start` (src/main.ts) on a shared machine: the
 * simulated cluster in a process of its own, two runners side by side with nothing configured,
 * a socket directory or a socket another user or runner holds, a taken port, and a killed api
 * process taking its children with it.
 */
import type { ChildProcess } from "node:child_process";
import { execFileSync } from "node:child_process";
import { chmod, chown, mkdir, mkdtemp, rm, stat, writeFile } from "node:fs/promises";
import { type Server, createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, afterEach, describe, expect, it } from "vitest";
import { RunnerClient } from "../../src/client/index.ts";
import { freePort } from "../support/ports.ts";
import { capturedStderr, spawnTs, stopChild } from "../support/processes.ts";
import { waitFor } from "../support/wait.ts";
import { sessionBody } from "../support/session-body.ts";
import { eventsUntil, framesUntilText, isStatus } from "../support/streams.ts";
import { exitOf } from "./support.ts";

const uid = process.getuid?.() ?? "user";
/** uid and gid of `nobody` on Debian. */
const NOBODY = 65534;
/** A cluster nothing listens for: the supervisor run alone needs one configured. */
const UNREACHABLE_KUBECONFIG = `apiVersion: v1
kind: Config
clusters: [{name: none, cluster: {server: "http://127.0.0.1:1"}}]
users: [{name: none, user: {token: none}}]
contexts: [{name: none, context: {cluster: none, user: none}}]
current-context: none
`;
const started: ChildProcess[] = [];
const scratch: string[] = [];

afterEach(async () => {
  for (const child of started.splice(0)) await stopChild(child, "SIGTERM");
});
afterAll(async () => {
  for (const dir of scratch.splice(0)) await rm(dir, { recursive: true, force: true });
});

async function machine(): Promise<{ home: string; tmp: string }> {
  const root = await mkdtemp(join(tmpdir(), "k8s-runner-machine-"));
  scratch.push(root);
  const home = join(root, "home");
  const tmp = join(root, "tmp");
  await mkdir(home);
  await mkdir(tmp);
  return { home, tmp };
}

/** `npm start`'s entry with no cluster, no PORT, no socket configured: a user's first try. */
function npmStart(place: { home: string; tmp: string }, env: Record<string, string> = {}): ChildProcess {
  const child = spawnTs("src/main.ts", { HOME: place.home, TMPDIR: place.tmp, LOG_LEVEL: "info", ...env });
  started.push(child);
  return child;
}

/** The api URL the runner logged once it listens. */
function servedUrl(child: ChildProcess): Promise<string> {
  return waitFor("the runner to listen", () => {
    if (child.exitCode !== null) throw new Error(`runner exited (${child.exitCode}): ${capturedStderr(child)}`);
    for (const line of capturedStderr(child).split("\n")) {
      if (!line.startsWith("{")) continue;
      const entry = JSON.parse(line) as { message?: string; url?: string };
      if (entry.message === "k8s-runner listening" && entry.url) return entry.url.replace(/\/v1$/, "");
    }
    return undefined;
  }, 150_000);
}

function children(pid: number): { pid: number; args: string }[] {
  const rows = execFileSync("ps", ["-e", "-o", "pid=,ppid=,args="]).toString().trim().split("\n");
  return rows
    .map((row) => row.trim().split(/\s+/))
    .filter(([, ppid]) => Number(ppid) === pid)
    .map(([child, , ...args]) => ({ pid: Number(child), args: args.join(" ") }));
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

async function ready(url: string, child?: ChildProcess): Promise<void> {
  await waitFor("the supervisor", async () => {
    if (child && child.exitCode !== null) throw new Error(`runner exited (${child.exitCode}): ${capturedStderr(child)}`);
    return (await fetch(`${url}/v1/sessions/none`)).status === 404 || undefined;
  }, 150_000);
}

// Each test boots one or two whole runners (a simulated cluster, a supervisor, an api).
describe("npm start on a shared machine", { timeout: 240_000 }, () => {
  it("runs the simulated cluster in its own process; a megabyte typed without a newline leaves the api answering", async () => {
    const place = await machine();
    const runner = npmStart(place);
    const url = await servedUrl(runner);
    await ready(url);
    const kids = children(runner.pid!);
    expect(kids.some((kid) => kid.args.includes("local-cluster-main"))).toBe(true);
    expect(kids.some((kid) => kid.args.includes("supervisor/main"))).toBe(true);

    const client = new RunnerClient(url);
    const { sessionId } = await client.createSession(sessionBody());
    await eventsUntil(client, sessionId, isStatus("running"));
    const terminal = client.terminal(sessionId);
    await terminal.send("y".repeat(1024 * 1024 - 16));
    expect((await fetch(`${url}/v1/health`)).status).toBe(200);
    await terminal.send("\rdone\r");
    await framesUntilText(terminal, "done");
    terminal.close();
    await client.deleteSession(sessionId);
  });

  it("lets two runners coexist with nothing configured: own ports, own sockets, own sessions", async () => {
    const place = await machine();
    const first = npmStart(place);
    const second = npmStart(place);
    const [firstUrl, secondUrl] = await Promise.all([servedUrl(first), servedUrl(second)]);
    await Promise.all([ready(firstUrl, first), ready(secondUrl, second)]);
    expect(firstUrl).not.toBe(secondUrl);

    const [a, b] = [new RunnerClient(firstUrl), new RunnerClient(secondUrl)];
    const { sessionId } = await a.createSession(sessionBody());
    await eventsUntil(a, sessionId, isStatus("running"));
    expect((await fetch(`${secondUrl}/v1/sessions/${sessionId}`)).status).toBe(404);
    const other = await b.createSession(sessionBody());
    await eventsUntil(b, other.sessionId, isStatus("running"));
    expect((await fetch(`${firstUrl}/v1/sessions/${other.sessionId}`)).status).toBe(404);
    for (const child of [first, second]) expect(capturedStderr(child)).not.toMatch(/EADDRINUSE|\n\s+at /);
  });

  // The default socket directory pre-created by someone else: another user's (run as root here,
  // so that it can be chowned to `nobody`) or one others can write. Every entry that listens or
  // connects on the socket refuses it with its one line and exit 2, before doing anything else.
  const entries = {
    "npm start": { entry: "src/main.ts", env: {} },
    "the api alone": { entry: "src/api/main.ts", env: {} },
    // A cluster that is never reached: the refusal comes before the supervisor talks to it.
    "the supervisor alone": { entry: "src/supervisor/main.ts", env: { RUNNER_SELF_URL: "http://127.0.0.1:1" } },
  };
  const unsafe = {
    "belongs to another user": {
      prepare: async (dir: string) => {
        if (process.getuid?.() !== 0) throw new Error("this test creates a directory owned by nobody: run it as root");
        await chown(dir, NOBODY, NOBODY);
      },
      refusal: (dir: string) => `internal socket directory ${dir} belongs to uid ${NOBODY}, not to this user (${uid}); remove it or set RUNNER_INTERNAL_SOCKET`,
    },
    "others can write": {
      prepare: (dir: string) => chmod(dir, 0o777),
      refusal: (dir: string) => `internal socket directory ${dir} is writable by others (mode 777); remove it or set RUNNER_INTERNAL_SOCKET`,
    },
  };
  for (const [how, directory] of Object.entries(unsafe)) {
    for (const [who, { entry, env }] of Object.entries(entries)) {
      it(`refuses a socket directory that ${how}: ${who} says so in one line and exits 2`, async () => {
        const place = await machine();
        const dir = join(place.tmp, `k8s-runner-${uid}`);
        await mkdir(dir, { mode: 0o700 });
        await directory.prepare(dir);
        const kubeconfig = join(place.home, "kubeconfig");
        await writeFile(kubeconfig, UNREACHABLE_KUBECONFIG);
        const child = spawnTs(entry, { HOME: place.home, TMPDIR: place.tmp, KUBECONFIG: kubeconfig, ...env });
        started.push(child);
        expect(await exitOf(child)).toBe(2);
        expect(capturedStderr(child).trim()).toBe(directory.refusal(dir));
      });
    }
  }

  it("never takes over a socket another live runner serves", async () => {
    const place = await machine();
    const port = await freePort();
    const dir = join(place.tmp, `k8s-runner-${uid}`);
    await mkdir(dir, { mode: 0o700 });
    const socketPath = join(dir, `supervisor-${port}.sock`);
    // Another runner's supervisor: it reads what it is sent (the api asks its supervisor for the
    // placement as soon as it listens) and closes; one that never read would keep them open.
    const other: Server = createServer((socket) => socket.resume().end());
    await new Promise<void>((resolve) => other.listen(socketPath, resolve));
    try {
      const runner = npmStart(place, { PORT: String(port) });
      expect(await exitOf(runner)).toBe(2);
      expect(capturedStderr(runner)).toContain(`another runner's supervisor is serving ${socketPath}`);
      expect((await stat(socketPath)).isSocket()).toBe(true);
    } finally {
      await new Promise((resolve) => other.close(resolve));
    }
  });

  it("stops with one line, not a crash loop, when the bundle port it was given is taken", async () => {
    const place = await machine();
    const taken = createServer();
    await new Promise<void>((resolve) => taken.listen(0, "0.0.0.0", resolve));
    const port = (taken.address() as { port: number }).port;
    try {
      const runner = npmStart(place, { RUNNER_BUNDLE_PORT: String(port) });
      expect(await exitOf(runner)).toBe(2);
      expect(capturedStderr(runner)).toContain(`port ${port} on 0.0.0.0 is already in use (another runner?); set RUNNER_BUNDLE_PORT to a free port`);
      expect(capturedStderr(runner)).not.toMatch(/\n\s+at /);
    } finally {
      await new Promise((resolve) => taken.close(resolve));
    }
  });

  it("takes the supervisor and the simulated cluster with it when the api process is SIGKILLed", async () => {
    const place = await machine();
    const runner = npmStart(place);
    await ready(await servedUrl(runner));
    const kids = children(runner.pid!).map((kid) => kid.pid);
    expect(kids.length).toBeGreaterThanOrEqual(2);
    runner.kill("SIGKILL");
    await waitFor("the children to end with their parent", () => kids.every((pid) => !alive(pid)) || undefined, 30_000);
  });
});
