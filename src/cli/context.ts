/** What every command gets: the typed client, the parsed global options and the process's streams. */
import { RunnerClient } from "../client/index.ts";
import type { GlobalOptions } from "./args.ts";
import { HumanSink, JsonSink, type OutputSink, type Streams } from "./output.ts";
import type { LocalTty } from "./terminal-io.ts";

export type CliContext = {
  client: RunnerClient;
  global: GlobalOptions;
  stdin: LocalTty;
  streams: Streams & { stdout: Streams["stdout"] & { isTTY?: boolean; columns?: number; rows?: number } };
  /** Registers what ^C does while a command runs (without a local TTY in raw mode). */
  onInterrupt(handler: () => void): void;
};

export function createSink(context: CliContext): OutputSink {
  return context.global.json ? new JsonSink(context.streams.stdout) : new HumanSink(context.streams);
}

export function print(context: CliContext, value: unknown, human: () => string): void {
  context.streams.stdout.write(`${context.global.json ? JSON.stringify(value) : human()}\n`);
}

export function newClient(global: GlobalOptions): RunnerClient {
  return new RunnerClient(global.url, global.acceptTerms !== undefined ? { acceptedTerms: global.acceptTerms } : {});
}
