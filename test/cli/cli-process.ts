/** Runs the `k8s-runner` bin as a child process, as a user or a script would, and collects what it printed. */
import { spawn } from "node:child_process";
import { fileURLToPath } from "node:url";

export const BIN = fileURLToPath(new URL("../../src/cli/bin.mjs", import.meta.url));

export type CliResult = { code: number | null; stdout: string; stderr: string };

export type RunningCli = {
  /** What it printed so far. */
  readonly output: { stdout: string; stderr: string };
  type(text: string): void;
  done: Promise<CliResult>;
};

/** Starts the bin; stdin stays open until it exits, so a CLI that forwards stdin never sees EOF early. */
export function startCli(args: string[], options: { url?: string; env?: Record<string, string> } = {}): RunningCli {
  const child = spawn(process.execPath, [BIN, ...args], {
    env: { ...process.env, ...(options.url && { K8S_RUNNER_URL: options.url }), ...options.env },
    stdio: ["pipe", "pipe", "pipe"],
  });
  const output = { stdout: "", stderr: "" };
  child.stdout.setEncoding("utf8").on("data", (chunk: string) => (output.stdout += chunk));
  child.stderr.setEncoding("utf8").on("data", (chunk: string) => (output.stderr += chunk));
  const done = new Promise<CliResult>((resolve, reject) => {
    child.once("error", reject);
    child.once("close", (code) => {
      child.stdin.destroy();
      resolve({ code, ...output });
    });
  });
  return { output, type: (text) => child.stdin.write(text), done };
}

export function runCli(args: string[], options: { url?: string; stdin?: string; env?: Record<string, string> } = {}): Promise<CliResult> {
  const cli = startCli(args, options);
  if (options.stdin !== undefined) cli.type(options.stdin);
  return cli.done;
}

/** The JSON lines a `--json` stream printed. */
export function jsonLines(stdout: string): Array<Record<string, unknown>> {
  return stdout
    .split("\n")
    .filter((line) => line.trim() !== "")
    .map((line) => JSON.parse(line) as Record<string, unknown>);
}
