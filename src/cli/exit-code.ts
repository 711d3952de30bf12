/** The CLI's exit codes: the app's own when it ran to its end, fixed ones otherwise. */
import type { RunStatus } from "../contract/wire.ts";

export const EXIT_ERROR = 1;
export const EXIT_USAGE = 2;
/** Stopped by this CLI on SIGINT, as a shell reports a process ended by ^C. */
export const EXIT_INTERRUPTED = 130;
/** Stopped by someone else (a DELETE, the runner's deadline), as for SIGTERM. */
export const EXIT_STOPPED = 143;

/**
 * The app's own exit code when the status says it ended by itself. A run pod reports a non-zero
 * exit of its application container as `failed` with `container "<name>" failed: <reason>
 * (exit code <n>)` (docs/kubernetes.md "Ends and failure messages"); init containers and waits are not the app's exits.
 */
export function appExitCode(status: RunStatus): number | undefined {
  if (status.kind === "exited") return status.code;
  if (status.kind !== "failed") return undefined;
  const match = /^container "[^"]+" failed: (?:[A-Za-z]+ )?\(exit code (\d+)\)/.exec(status.message);
  return match ? Number(match[1]) : undefined;
}

export function exitCodeFor(status: RunStatus, interrupted: boolean): number {
  const appCode = appExitCode(status);
  if (appCode !== undefined) return appCode;
  if (status.kind === "stopped") return interrupted ? EXIT_INTERRUPTED : EXIT_STOPPED;
  return EXIT_ERROR;
}
