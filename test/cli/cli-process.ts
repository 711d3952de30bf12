/** Runs the `k8s-runner` bin as a child process, as a user or a script would, and collects what it printed. */
import { spawn } from "node:child_process";
import { fileURLToPath } from "node:url";

export const BIN = fileURLToPath(new URL("../../src/cli/bin.mjs", import.meta.url));

export type CliResult = { code: number | null; stdout: string; stderr: string };

export function runCli(args: string[], options: { url?: string; stdin?: string; env?: Record<string, string> } = {}): Promise<CliResult> {
  const child = spawn(process.execPath, [BIN, ...args], {
    env: { ...process.env, ...(options.url && { K8S_RUNNER_URL: options.url }), ...options.env },
    stdio: ["pipe", "pipe", "pipe"],
  });
  let stdout = "";
  let stderr = "";
  child.stdout.setEncoding("utf8").on("data", (chunk: string) => (stdout += chunk));
  child.stderr.setEncoding("utf8").on("data", (chunk: string) => (stderr += chunk));
  // Stdin stays open unless the test gives it: a CLI that forwards stdin must not see EOF early.
  if (options.stdin !== undefined) child.stdin.write(options.stdin);
  return new Promise((resolve, reject) => {
    child.once("error", reject);
    child.once("close", (code) => {
      child.stdin.destroy();
      resolve({ code, stdout, stderr });
    });
  });
}

/** The JSON lines a `--json` stream printed. */
export function jsonLines(stdout: string): Array<Record<string, unknown>> {
  return stdout
    .split("\n")
    .filter((line) => line.trim() !== "")
    .map((line) => JSON.parse(line) as Record<string, unknown>);
}
