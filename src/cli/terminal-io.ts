/**
 * Joins a session's terminal WebSocket to this process's stdin and stdout. Output is written
 * as it arrives (or as JSON lines under --json); stdin is forwarded only once `stdinGate`
 * opens (the workload is running), because the runner drops stdin sent before that. A local
 * TTY is put in raw mode so keys like ^C reach the app, and its size follows the window.
 * A socket closed with a code that is not final (a runner restart: 1011) is reopened from the
 * last byte seen, as the reference client does (docs/api.md "Terminal (WebSocket)"), so no output is repeated.
 */
import type { Terminal } from "../client/index.ts";
import { CloseCodes } from "../contract/streams.ts";
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

const FINAL_CLOSE_CODES = new Set<number>([
  CloseCodes.normal,
  1001,
  1005,
  CloseCodes.forbiddenOrigin,
  CloseCodes.notFound,
  CloseCodes.terminalNothingToReplay,
]);
const MAX_RECONNECT_DELAY_MS = 10_000;
/** Opens in a row that never connect before the runner counts as unreachable. */
const MAX_FAILED_OPENS = 6;

/** Relays until a socket closes for good; answers that close's code and reason. */
export async function relayTerminal(
  open: (lastSeq: number) => Terminal,
  options: TerminalRelayOptions,
): Promise<{ code: number; reason: string }> {
  const { stdin, stdout, sink } = options;
  let terminal: Terminal | undefined;
  let connected = false;
  let stopped = false;
  // Keys typed while a socket is being reopened wait for it (a closed socket drops them).
  const pending: Uint8Array[] = [];
  const forward = (chunk: Buffer | string) => {
    const bytes = typeof chunk === "string" ? new TextEncoder().encode(chunk) : new Uint8Array(chunk);
    if (connected) void terminal?.send(bytes).catch(() => undefined);
    else pending.push(bytes);
  };
  const resize = () => {
    if (stdout.columns && stdout.rows) void terminal?.resize(stdout.columns, stdout.rows).catch(() => undefined);
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

  let lastSeq = 0;
  let delay = 250;
  let failedOpens = 0;
  try {
    for (;;) {
      terminal = open(lastSeq);
      const opened = await terminal.opened.then(() => true, () => false);
      if (opened) {
        failedOpens = 0;
        connected = true;
        if (stdout.isTTY) resize();
        for (const bytes of pending.splice(0)) void terminal.send(bytes).catch(() => undefined);
      } else if (++failedOpens >= MAX_FAILED_OPENS) {
        return { code: 1006, reason: "could not open the session's terminal" };
      }
      for await (const frame of terminal.frames()) {
        delay = 250;
        if (frame.kind === "bytes") {
          // A reopened socket replays from lastSeq; anything at or below it was printed.
          if (frame.seq <= lastSeq) continue;
          lastSeq = frame.seq;
          sink.output(frame.tag, frame.seq, frame.payload);
        } else if (frame.message.type === "gap") {
          sink.notice("earlier output was evicted from the runner's buffer");
        }
      }
      connected = false;
      const closed = await terminal.closed;
      if (FINAL_CLOSE_CODES.has(closed.code)) return closed;
      await new Promise((resolve) => setTimeout(resolve, delay));
      delay = Math.min(delay * 2, MAX_RECONNECT_DELAY_MS);
    }
  } finally {
    stopped = true;
    stdin?.off("data", forward);
    stdout.off("resize", resize);
    if (raw) stdin!.setRawMode!(false);
    stdin?.pause();
  }
}
