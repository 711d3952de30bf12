/**
 * Both processes around the scripted backend, with their child handles and stderr exposed, so
 * the hardening tests can signal each one and read what it logged.
 */
import type { ChildProcess } from "node:child_process";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { WebSocket } from "ws";
import { RunnerClient } from "../../src/client/index.ts";
import { freePort } from "../support/ports.ts";
import { capturedStderr, spawnTs, stopChild } from "../support/processes.ts";
import { waitFor } from "../support/wait.ts";

export type Processes = {
  baseUrl: string;
  port: number;
  env: Record<string, string>;
  client: RunnerClient;
  api(): ChildProcess;
  supervisor(): ChildProcess;
  startApi(): Promise<void>;
  startSupervisor(): Promise<void>;
  close(): Promise<void>;
};

export async function startProcesses(env: Record<string, string> = {}, options: { host?: string } = {}): Promise<Processes> {
  const dir = await mkdtemp(join(tmpdir(), "k8s-runner-harden-"));
  const port = await freePort();
  const fullEnv = { RUNNER_INTERNAL_SOCKET: join(dir, "supervisor.sock"), PORT: String(port), ...env };
  const baseUrl = `http://${options.host ?? "127.0.0.1"}:${port}`;
  let api: ChildProcess | undefined;
  let supervisor: ChildProcess | undefined;
  const processes: Processes = {
    baseUrl,
    port,
    env: fullEnv,
    client: new RunnerClient(baseUrl, env.RUNNER_API_TOKEN ? { headers: { authorization: `Bearer ${env.RUNNER_API_TOKEN}` } } : undefined),
    api: () => api!,
    supervisor: () => supervisor!,
    async startSupervisor() {
      supervisor = spawnTs("test/support/scripted-supervisor.ts", fullEnv);
      const child = supervisor;
      await new Promise<void>((resolve, reject) => {
        let seen = "";
        child.stdout?.on("data", (chunk: Buffer) => {
          seen += chunk.toString();
          if (seen.includes("supervisor ready")) resolve();
        });
        child.once("exit", (code) => reject(new Error(`supervisor exited (${code}): ${capturedStderr(child)}`)));
      });
    },
    async startApi() {
      api = spawnTs("src/api/main.ts", fullEnv);
      const child = api;
      await waitFor("the api process to answer /v1/health", async () => {
        if (child.exitCode !== null) throw new Error(`api exited: ${capturedStderr(child)}`);
        return (await fetch(`${baseUrl}/v1/health`)).ok || undefined;
      });
    },
    async close() {
      await Promise.all([stopChild(api, "SIGKILL"), stopChild(supervisor, "SIGKILL")]);
      await rm(dir, { recursive: true, force: true });
    },
  };
  await processes.startSupervisor();
  await processes.startApi();
  return processes;
}

/** Resolves with the exit code once the process has ended. */
export function exitOf(child: ChildProcess): Promise<number | null> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve(child.exitCode);
  return new Promise((resolve) => child.once("exit", (code) => resolve(code)));
}

/** A raw WebSocket to the terminal route, open (or refused) before it resolves. */
export function openSocket(url: string, headers: Record<string, string> = {}): Promise<{ socket: WebSocket; closed: Promise<{ code: number; reason: string }> }> {
  const socket = new WebSocket(url, { headers });
  const closed = new Promise<{ code: number; reason: string }>((resolve) => socket.once("close", (code, reason) => resolve({ code, reason: reason.toString() })));
  return new Promise((resolve, reject) => {
    socket.once("open", () => resolve({ socket, closed }));
    socket.once("unexpected-response", (_request, response) => reject(new Error(`HTTP ${response.statusCode}`)));
    socket.once("error", reject);
  });
}

export async function postJson(baseUrl: string, path: string, body: unknown, headers: Record<string, string> = {}): Promise<Response> {
  return fetch(`${baseUrl}${path}`, { method: "POST", headers: { "content-type": "application/json", ...headers }, body: typeof body === "string" ? body : JSON.stringify(body) });
}
