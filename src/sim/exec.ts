// What `pods/exec` can run in a simulated container: what the container's shell can run
// (shell.ts: echo, sleep, exit, cat FILE, wget, tar…, under `sh -c` or not), `env` and
// `hostname` from the pod, and `cat` copying stdin. Anything else is an executable the image
// does not have, answered the way the container runtime answers it.
import { parseCommandLine, type Script } from "./shell.ts";

export type ExecProgram = { script: Script } | { cat: true };

export interface ExecContext {
  env: Record<string, string>;
  hostname: string;
}

export function execProgram(command: string[], ctx: ExecContext): ExecProgram | undefined {
  const [cmd, ...args] = command;
  if (cmd === "env" && args.length === 0) {
    const env = { PATH: "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin", HOSTNAME: ctx.hostname, ...ctx.env };
    return { script: [{ argv: ["echo", "-n", Object.entries(env).map(([k, v]) => `${k}=${v}\n`).join("")], after: ";" }] };
  }
  if (cmd === "hostname" && args.length === 0) return { script: [{ argv: ["echo", ctx.hostname], after: ";" }] };
  if (cmd === "cat" && args.length === 0) return { cat: true };
  const script = parseCommandLine(command, ctx.env);
  return script ? { script } : undefined;
}

/** The Status an exec ends with, as the kubelet reports it on the error channel. */
export function execStatus(command: string[], exitCode: number): Record<string, unknown> {
  if (exitCode === 0) return { metadata: {}, status: "Success" };
  return {
    metadata: {},
    status: "Failure",
    message: `command terminated with non-zero exit code: error executing command [${command.join(" ")}], exit code ${exitCode}`,
    reason: "NonZeroExitCode",
    details: { causes: [{ reason: "ExitCode", message: String(exitCode) }] },
  };
}

/** The runtime's answer for a program the image does not contain. */
export function notFoundStatus(command: string[]): Record<string, unknown> {
  const message = `Internal error occurred: error executing command in container: failed to exec in container: OCI runtime exec failed: exec failed: unable to start container process: exec: ${JSON.stringify(command[0] ?? "")}: executable file not found in $PATH: unknown`;
  return { metadata: {}, status: "Failure", message, reason: "InternalError", details: { causes: [{ message }] }, code: 500 };
}
