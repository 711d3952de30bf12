/**
 * A whole runner started as a user starts it on a machine with no cluster configured (a HOME
 * without ~/.kube/config and no KUBECONFIG), so it brings up the embedded simulated cluster.
 * Used for `npm start` from source and for the compiled bundles.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { RunnerClient } from "../../src/client/index.ts";
import { freePort } from "./ports.ts";
import { waitFor } from "./wait.ts";

export type UnconfiguredRunner = {
  process: ChildProcess;
  client: RunnerClient;
  stderr(): string;
  /** Ends the runner (its process group when detached) and removes its HOME. */
  stop(): Promise<void>;
};

export async function startUnconfiguredRunner(command: string[], options: { cwd: string; env?: Record<string, string>; detached?: boolean }): Promise<UnconfiguredRunner> {
  const home = await mkdtemp(join(tmpdir(), "k8s-runner-home-"));
  const [port, bundlePort] = [await freePort(), await freePort()];
  const [file, ...args] = command;
  const child = spawn(file!, args, {
    cwd: options.cwd,
    env: {
      PATH: process.env.PATH ?? "",
      HOME: home,
      PORT: String(port),
      RUNNER_BUNDLE_PORT: String(bundlePort),
      RUNNER_INTERNAL_SOCKET: join(home, "supervisor.sock"),
      LOG_LEVEL: "warn",
      ...options.env,
    },
    stdio: ["ignore", "ignore", "pipe"],
    detached: options.detached ?? false,
  });
  let stderr = "";
  child.stderr?.on("data", (chunk: Buffer) => (stderr += chunk.toString()));
  const client = new RunnerClient(`http://127.0.0.1:${port}`);
  const stop = async () => {
    if (child.exitCode === null && child.signalCode === null) {
      const exited = new Promise((resolve) => child.once("exit", resolve));
      if (options.detached) process.kill(-child.pid!, "SIGTERM");
      else child.kill("SIGTERM");
      await exited;
    }
    await rm(home, { recursive: true, force: true });
  };
  await waitFor("the runner to serve", async () => (await fetch(`${client.baseUrl}/v1/sessions/none`)).status === 404 || undefined, 60_000).catch(async (error: unknown) => {
    await stop();
    throw error;
  });
  return { process: child, client, stderr: () => stderr, stop };
}
