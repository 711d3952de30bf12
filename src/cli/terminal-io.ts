/**
 * Joins a session's terminal WebSocket to this process's stdin and stdout. Output is written
 * as it arrives (or as JSON lines under --json); stdin is forwarded only once `stdinGate`
 * opens (the workload is running), because the runner drops stdin sent before that. A local
 * TTY is put in raw mode so keys like ^C reach the app, and its size follows the window.
 */
import type { Terminal } from "../client/index.ts";
import type { OutputSink } from "./output.ts";

export type LocalTty = NodeJS.ReadableStream & { isTTY?: boolean; setRawMode?(raw: boolean): unknown };
export type LocalScreen = NodeJS.WritableStream & { isTTY?: boolean; columns?: number; rows?: number };

export type TerminalRelayOptions = {
  stdin: LocalTty | undefined;
  stdout: LocalScreen;
  sink: OutputSink;
  /** Resolves when stdin may flow; undefined = at once. */
  stdinGate?: Promise<void>;
};

/** Relays until the socket closes; answers its close code and reason. */
export async function relayTerminal(terminal: Terminal, options: TerminalRelayOptions): Promise<{ code: number; reason: string }> {
  const { stdin, stdout, sink } = options;
  let stopped = false;
  const forward = (chunk: Buffer | string) => void terminal.send(typeof chunk === "string" ? chunk : new Uint8Array(chunk)).catch(() => undefined);
  const resize = () => {
    if (stdout.columns && stdout.rows) void terminal.resize(stdout.columns, stdout.rows).catch(() => undefined);
  };
  const raw = stdin?.isTTY === true && typeof stdin.setRawMode === "function";

  void (async () => {
    await options.stdinGate;
    if (stopped || !stdin) return;
    if (raw) stdin.setRawMode!(true);
    if (stdout.isTTY) {
      resize();
      stdout.on("resize", resize);
    }
    stdin.on("data", forward);
    stdin.resume();
  })();

  try {
    await terminal.opened;
  } catch {
    stopped = true;
    throw new Error("could not open the session's terminal");
  }
  for await (const frame of terminal.frames()) {
    if (frame.kind === "bytes") sink.output(frame.tag, frame.seq, frame.payload);
    else if (frame.message.type === "gap") sink.notice("earlier output was evicted from the runner's buffer");
  }
  stopped = true;
  stdin?.off("data", forward);
  stdout.off("resize", resize);
  if (raw) stdin!.setRawMode!(false);
  stdin?.pause();
  return terminal.closed;
}
