/**
 * Starts the runner's two processes as users do (separate Node processes, a Unix socket
 * between them, the api on an ephemeral port) and tears them down after the test.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { RunnerClient } from "../../src/client/index.ts";
import { openApiDocument } from "../../src/contract/openapi.ts";
import { NODE_RUNTIME_ENV, NODE_RUNTIME_FLAGS } from "../../src/launch/node-runtime.ts";
import { RUNNER_VERSION } from "../../src/version.ts";
import { type AnswerTap, startAnswerTap } from "./answer-tap.ts";
import { freePort } from "./ports.ts";
import { waitFor } from "./wait.ts";

const ROOT = fileURLToPath(new URL("../..", import.meta.url));

/**
 * The processes this test process started that still run. A start a hook's timeout abandoned
 * never reaches the test's close: whatever is left goes with the test process, not after it.
 */
const running = new Set<ChildProcess>();
process.once("exit", () => {
  for (const child of running) child.kill("SIGKILL");
});

/**
 * Starts a TypeScript entry of the project as its own Node process (tsx), its stderr captured,
 * with Node's memory settings as the image starts it (src/launch/node-runtime.ts).
 */
export function spawnTs(entry: string, env: Record<string, string>, options: { channel?: boolean } = {}): ChildProcess {
  const child = spawn(process.execPath, [...NODE_RUNTIME_FLAGS, "--import", "tsx", join(ROOT, entry)], {
    cwd: ROOT,
    env: { PATH: process.env.PATH ?? "", HOME: process.env.HOME ?? "/tmp", LOG_LEVEL: "warn", ...NODE_RUNTIME_ENV, ...env },
    // The channel tells the child when this process is gone, however it went (a worker killed
    // at a hook's timeout runs no exit hook): both entries then shut down rather than linger.
    // An api started without one, as deployed, can open the handoff channel to its supervisor
    // instead (a process holds one channel); the exit hook above still ends it with this one.
    stdio: options.channel === false ? ["ignore", "pipe", "pipe"] : ["ignore", "pipe", "pipe", "ipc"],
  });
  // The channel itself must not keep this process alive.
  child.channel?.unref();
  running.add(child);
  child.once("exit", () => running.delete(child));
  let stderr = "";
  child.stderr?.on("data", (chunk: Buffer) => {
    stderr += chunk.toString();
    if (process.env.TEST_VERBOSE) process.stderr.write(chunk);
  });
  Object.defineProperty(child, "capturedStderr", { get: () => stderr });
  return child;
}

export function capturedStderr(child: ChildProcess): string {
  return (child as ChildProcess & { capturedStderr?: string }).capturedStderr ?? "";
}

function waitForLine(child: ChildProcess, line: string): Promise<void> {
  return new Promise((resolve, reject) => {
    let seen = "";
    child.stdout?.on("data", (chunk: Buffer) => {
      seen += chunk.toString();
      if (seen.includes(line)) resolve();
    });
    child.once("exit", (code) => reject(new Error(`process exited (${code}) before '${line}': ${capturedStderr(child)}`)));
  });
}

export function stopChild(child: ChildProcess | undefined, signal: NodeJS.Signals = "SIGTERM"): Promise<void> {
  if (!child || child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => {
    child.once("exit", () => resolve());
    child.kill(signal);
  });
}

export type RunnerUnderTest = {
  /** The api as the tests reach it: through the answer tap, which holds each answer to the OpenAPI document. */
  baseUrl: string;
  /**
   * The api itself, without the tap: for an answer given before the request was read to its end
   * (a 413), whose reset of the connection can reach the tap before the answer does.
   */
  directUrl: string;
  answers: AnswerTap;
  client: RunnerClient;
  socketPath: string;
  env: Record<string, string>;
  startApi(): Promise<void>;
  stopApi(signal?: NodeJS.Signals): Promise<void>;
  startSupervisor(): Promise<void>;
  stopSupervisor(signal?: NodeJS.Signals): Promise<void>;
  /** What each process has written to stderr so far (its log lines). */
  stderr(): { api: string; supervisor: string };
  close(): Promise<void>;
};

/**
 * Both processes with the scripted backend (test/support/scripted-supervisor.ts), reached
 * through an answer tap; `close()` fails when any answer did not match the OpenAPI document.
 */
export async function startRunner(options: { env?: Record<string, string>; clientOptions?: ConstructorParameters<typeof RunnerClient>[1] } = {}): Promise<RunnerUnderTest> {
  const dir = await mkdtemp(join(tmpdir(), "k8s-runner-test-"));
  const socketPath = join(dir, "supervisor.sock");
  const port = await freePort();
  const env = { RUNNER_INTERNAL_SOCKET: socketPath, PORT: String(port), ...options.env };
  const answers = await startAnswerTap(port, openApiDocument(RUNNER_VERSION));
  const baseUrl = answers.url;
  const client = new RunnerClient(baseUrl, options.clientOptions);
  let api: ChildProcess | undefined;
  let supervisor: ChildProcess | undefined;

  const runner: RunnerUnderTest = {
    baseUrl,
    directUrl: `http://127.0.0.1:${port}`,
    answers,
    client,
    socketPath,
    env,
    async startSupervisor() {
      supervisor = spawnTs("test/support/scripted-supervisor.ts", env);
      await waitForLine(supervisor, "supervisor ready");
    },
    stopSupervisor: (signal) => stopChild(supervisor, signal),
    async startApi() {
      api = spawnTs("src/api/main.ts", env);
      const child = api;
      await waitFor("the api process to answer /v1/health", async () => {
        if (child.exitCode !== null) throw new Error(`api exited: ${capturedStderr(child)}`);
        return (await fetch(`${baseUrl}/v1/health`)).ok || undefined;
      });
    },
    stopApi: (signal) => stopChild(api, signal),
    stderr: () => ({ api: api ? capturedStderr(api) : "", supervisor: supervisor ? capturedStderr(supervisor) : "" }),
    async close() {
      await Promise.all([stopChild(api, "SIGKILL"), stopChild(supervisor)]);
      await Promise.all([answers.close(), rm(dir, { recursive: true, force: true })]);
      if (answers.violations.length > 0) {
        throw new Error(`answers that do not match the OpenAPI document:\n${answers.violations.join("\n")}`);
      }
    },
  };
  await runner.startSupervisor();
  await runner.startApi();
  return runner;
}
