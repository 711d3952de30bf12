// What `pods/exec` can run in a simulated container: the simple command lines script.ts knows
// (echo, sleep, exit, true, false, under `sh -c` or not), `env` and `hostname` from the pod, and
// `cat` copying stdin. Anything else is an executable the image does not have, answered the way
// the container runtime answers it.
import { interpret, type Step } from "./script.ts";

export type ExecProgram = { steps: Step[] } | { cat: true };

export interface ExecContext {
  env: Record<string, string>;
  hostname: string;
}

export function execProgram(command: string[], ctx: ExecContext): ExecProgram | undefined {
  const [cmd, ...args] = command;
  if (cmd === "env" && args.length === 0) {
    const env = { PATH: "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin", HOSTNAME: ctx.hostname, ...ctx.env };
    return { steps: [{ echo: Object.entries(env).map(([k, v]) => `${k}=${v}\n`).join("") }] };
  }
  if (cmd === "hostname" && args.length === 0) return { steps: [{ echo: `${ctx.hostname}\n` }] };
  if (cmd === "cat" && args.length === 0) return { cat: true };
  const steps = interpret(command);
  return steps ? { steps } : undefined;
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
