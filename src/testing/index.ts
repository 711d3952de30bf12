/**
 * `k8s-runner/testing`: a whole runner for another project's test suite (docs/testing-your-apps.md).
 * Like envtest or Miniflare, it is a real runner, not a mock: `npm start`'s process (api, a
 * supervisor child, the embedded simulated cluster unless a kubeconfig is given), forked with
 * an IPC channel on a free port, in a temporary directory of its own that holds its socket, its
 * HOME and its TMPDIR (the simulated cluster's files), so runners started together never meet.
 *
 * Its processes end with the test process however that ends: `stop()`, the test process leaving
 * (an exit hook kills them), or the test process killed (the runner stops when its IPC channel
 * closes, src/launch/parent.ts; the directory left is removed by the next start, leftovers.ts).
 */
import { type ChildProcess, fork } from "node:child_process";
import { rmSync } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import * as v from "valibot";
import { RunnerClient } from "../client/index.ts";
import { entryPath } from "../install-layout.ts";
import { ephemeralPort } from "../internal/listen.ts";
import { endGroup, signalGroup } from "./process-group.ts";
import { claimDirectory, DIRECTORY_PREFIX, removeAbandonedDirectories } from "./leftovers.ts";
import { type ResolvedTestRunnerOptions, resolveTestRunnerOptions, type TestRunnerOptions } from "./options.ts";

export type { TestRunnerOptions } from "./options.ts";

export type TestRunner = {
  /** The runner's base URL (`http://127.0.0.1:<port>`); the contract is under `/v1`. */
  url: string;
  /** The typed client on `url`. */
  client: RunnerClient;
  /** The runner's process id; it leads a process group holding its supervisor and cluster. */
  pid: number;
  /** The runner's temporary directory (its socket, HOME and TMPDIR); removed by `stop()`. */
  directory: string;
  /** The runner's log lines so far (stderr, JSON; the last 256 KiB), for a failing test's message. */
  logs(): string;
  /** Ends every process of the runner and removes its directory; safe to call more than once. */
  stop(): Promise<void>;
};

const LOG_TAIL_BYTES = 256 * 1024;
const ListeningMessageSchema = v.object({ kind: v.literal("listening"), url: v.string() });

/** Node runs TypeScript through tsx in a clone (the package's own tests); the package runs dist/. */
function execArgvFor(entry: string): string[] {
  if (!entry.endsWith(".ts")) return [];
  const tsx = createRequire(import.meta.url).resolve("tsx");
  return ["--import", pathToFileURL(tsx).href];
}

function exited(child: ChildProcess): boolean {
  return child.exitCode !== null || child.signalCode !== null;
}

async function runnerEnvironment(directory: string, options: ResolvedTestRunnerOptions): Promise<NodeJS.ProcessEnv> {
  return {
    PATH: process.env.PATH ?? "",
    HOME: directory,
    TMPDIR: directory,
    PORT: String(await ephemeralPort("127.0.0.1")),
    RUNNER_INTERNAL_SOCKET: join(directory, "supervisor.sock"),
    LOG_LEVEL: "warn",
    ...(options.kubeconfig !== undefined ? { KUBECONFIG: options.kubeconfig } : {}),
    ...options.env,
  };
}

/** Resolves with the api's URL once the runner's `/v1/ready` is true; rejects if it exits first or the time is up. */
function untilReady(child: ChildProcess, timeoutMs: number, logs: () => string): Promise<string> {
  const deadline = Date.now() + timeoutMs;
  return new Promise((resolve, reject) => {
    const settle = (outcome: () => void) => {
      clearTimeout(timer);
      child.off("exit", onExit);
      outcome();
    };
    const fail = (why: string) => settle(() => reject(new Error(`the test runner did not start: ${why}\n${logs().slice(-4096)}`)));
    const onExit = (code: number | null, signal: string | null) => fail(`it exited (code ${code}, signal ${signal})`);
    const timer = setTimeout(() => fail(`not ready within ${timeoutMs} ms`), timeoutMs);
    child.once("exit", onExit);
    child.on("message", (message) => {
      const listening = v.safeParse(ListeningMessageSchema, message);
      if (!listening.success) return;
      void pollReady(listening.output.url, deadline).then(
        () => settle(() => resolve(listening.output.url)),
        (error: Error) => fail(error.message),
      );
    });
  });
}

/** Until the api answers ready, that is the supervisor serves; a refused connection is retried too. */
async function pollReady(url: string, deadline: number): Promise<void> {
  while (Date.now() < deadline) {
    const ready = await fetch(`${url}/v1/ready`).then((answer) => answer.ok, () => false);
    if (ready) return;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error("/v1/ready stayed false");
}

/** Starts a runner; see the module comment and docs/testing-your-apps.md. */
export async function startTestRunner(input: TestRunnerOptions = {}): Promise<TestRunner> {
  const options = resolveTestRunnerOptions(input);
  await removeAbandonedDirectories();
  const directory = await mkdtemp(join(tmpdir(), DIRECTORY_PREFIX));
  await claimDirectory(directory);
  const entry = entryPath("main");
  const child = fork(entry, [], {
    env: await runnerEnvironment(directory, options),
    execArgv: execArgvFor(entry),
    stdio: ["ignore", "pipe", "pipe", "ipc"],
    // Its own process group: stop() can then reach the supervisor and the cluster too.
    detached: true,
  });
  let output = "";
  const capture = (chunk: Buffer) => (output = (output + chunk.toString()).slice(-LOG_TAIL_BYTES));
  child.stdout!.on("data", capture);
  child.stderr!.on("data", capture);
  // The test process leaving without stop() (a runner with no afterAll) leaves nothing either.
  const onExit = () => {
    signalGroup(child.pid!, "SIGKILL");
    rmSync(directory, { recursive: true, force: true });
  };
  process.once("exit", onExit);
  let stopped: Promise<void> | undefined;
  const stop = () => (stopped ??= stopRunner(child, directory, options.stopTimeoutMs).finally(() => process.off("exit", onExit)));
  try {
    const url = await untilReady(child, options.startTimeoutMs, () => output);
    return { url, client: new RunnerClient(url), pid: child.pid!, directory, logs: () => output, stop };
  } catch (error) {
    await stop();
    throw error;
  }
}

/** SIGTERM (the runner stops its supervisor and cluster), then SIGKILL to the group past the bound. */
async function stopRunner(child: ChildProcess, directory: string, boundMs: number): Promise<void> {
  if (!exited(child)) {
    const gone = new Promise<void>((resolve) => child.once("exit", () => resolve()));
    child.kill("SIGTERM");
    const timer = setTimeout(() => signalGroup(child.pid!, "SIGKILL"), boundMs);
    await gone;
    clearTimeout(timer);
  }
  // Whatever of the group outlived its leader (a child mid-exit) goes now.
  await endGroup(child.pid!, boundMs);
  child.stdout?.destroy();
  child.stderr?.destroy();
  await rm(directory, { recursive: true, force: true });
}
