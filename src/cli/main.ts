/**
 * The `k8s-runner` command-line client (docs/clients.md "Command-line client"). Parses the command
 * line, runs one command on the typed client and exits with its code: the app's own for
 * `run` and `attach`, 1 for a runner or network error, 2 for a usage error.
 */
import { pathToFileURL } from "node:url";
import { currentEnv } from "../config/environment.ts";
import { entryPath } from "../install-layout.ts";
import { RunnerError } from "../client/index.ts";
import { type Command, USAGE, parseCommandLine } from "./args.ts";
import { BundleError } from "./bundle.ts";
import { attachCommand } from "./commands/attach.ts";
import { capabilitiesCommand, describeCommand, probeCommand, sessionsCommand, stopCommand } from "./commands/oneshot.ts";
import { runCommand } from "./commands/run.ts";
import { type CliContext, newClient } from "./context.ts";
import { EXIT_ERROR, EXIT_INTERRUPTED, EXIT_USAGE } from "./exit-code.ts";

/** The runner's own process entries behind `serve` and `supervisor`. */
const SERVER_ENTRIES = { serve: "main", supervisor: "launch/supervisor-alone" } as const;

function execute(context: CliContext, command: Exclude<Command, { name: "help" | "serve" | "supervisor" }>): Promise<number> {
  switch (command.name) {
    case "run":
      return runCommand(context, command.run);
    case "attach":
    case "logs":
      return attachCommand(context, command.sessionId, command.app, command.name === "attach");
    case "sessions":
      return sessionsCommand(context);
    case "stop":
      return stopCommand(context, command.sessionId);
    case "describe":
      return describeCommand(context, command.sessionId);
    case "probe":
      return probeCommand(context, command.image, command.pullPolicy);
    case "capabilities":
      return capabilitiesCommand(context);
  }
}

/** The system error code behind a failed fetch (undici nests it, sometimes in an AggregateError). */
function networkErrorCode(error: unknown): string | undefined {
  for (let cause = (error as { cause?: unknown }).cause; cause; cause = (cause as { cause?: unknown }).cause) {
    const found = (cause as { code?: string; errors?: Array<{ code?: string }> }).code ?? (cause as { errors?: Array<{ code?: string }> }).errors?.[0]?.code;
    if (typeof found === "string" && /^E[A-Z]+$/.test(found)) return found;
  }
  return undefined;
}

/** One line for any failure: the runner's own message where it gave one. */
function describe(error: unknown, url: string): string {
  if (error instanceof RunnerError || error instanceof BundleError) return error.message;
  const code = networkErrorCode(error);
  if (code !== undefined) return `cannot reach the runner at ${url} (${code})`;
  return error instanceof Error ? error.message : String(error);
}

/** The exit code, or undefined when the command became a server that now runs until it stops itself. */
export async function main(argv: readonly string[]): Promise<number | undefined> {
  const parsed = parseCommandLine(argv, currentEnv());
  if (!parsed.ok) {
    process.stderr.write(`k8s-runner: ${parsed.message}\n(k8s-runner --help lists the commands)\n`);
    return EXIT_USAGE;
  }
  const command = parsed.command;
  if (command.name === "help") {
    process.stdout.write(`${USAGE}\n`);
    return 0;
  }
  if (command.name === "serve" || command.name === "supervisor") {
    // The entry runs in this process, as `node <entry>` would run it; it handles its own signals.
    await import(pathToFileURL(entryPath(SERVER_ENTRIES[command.name])).href);
    return undefined;
  }
  let interrupt: (() => void) | undefined;
  // A first ^C asks the command to wind down (a run stops its session); a second one leaves.
  process.on("SIGINT", () => {
    if (!interrupt) process.exit(EXIT_INTERRUPTED);
    const handler = interrupt;
    interrupt = undefined;
    handler();
  });
  const context: CliContext = {
    client: newClient(command.global),
    global: command.global,
    stdin: process.stdin,
    streams: { stdout: process.stdout, stderr: process.stderr },
    onInterrupt: (handler) => (interrupt = handler),
  };
  try {
    return await execute(context, command);
  } catch (error) {
    const message = describe(error, command.global.url);
    if (command.global.json) process.stdout.write(`${JSON.stringify({ type: "error", message })}\n`);
    process.stderr.write(`k8s-runner: ${message}\n`);
    return EXIT_ERROR;
  }
}

const code = await main(process.argv.slice(2));
// Pending stdout is flushed before leaving (open sockets would otherwise hold the process).
if (code !== undefined) process.stdout.write("", () => process.exit(code));
