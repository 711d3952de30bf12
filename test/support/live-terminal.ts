/**
 * A terminal client as a user's browser tab runs one across replica trouble: it reads every frame,
 * types a numbered line now and then, and when the socket closes with a code that is not final
 * (docs/api.md "Terminal (WebSocket)") it reconnects through the same api with the last seq it got, until
 * told to stop. What it saw is kept per connection, so a test can tell what was shown twice,
 * what was missed without a `gap`, and what it typed on which connection.
 */
import type { RunnerClient, Terminal, TerminalFrame } from "../../src/client/index.ts";

/** Close codes a client gives up on (docs/api.md): the session ended, is unknown, or refused it. */
const FINAL_CODES = new Set([1000, 1001, 1005, 4403, 4404, 4410]);

export type Connection = { frames: TerminalFrame[]; typed: string[]; closed?: { code: number; reason: string } };

export type LiveTerminal = {
  readonly connections: Connection[];
  /** Stops typing, closes the socket and ends the reconnecting. */
  stop(): Promise<void>;
};

/**
 * Follows `sessionId`'s terminal through `via`. Every `typeEveryMs` (when connected) it types
 * `<label>-<n>\r`, n counting from 1 across connections.
 */
export function liveTerminal(via: RunnerClient, sessionId: string, label: string, typeEveryMs: number): LiveTerminal {
  const connections: Connection[] = [];
  let stopped = false;
  let current: Terminal | undefined;
  let typedCount = 0;
  let lastSeq = 0;

  const typing = setInterval(() => {
    const connection = connections.at(-1);
    if (!current || !connection || connection.closed) return;
    typedCount += 1;
    const line = `${label}-${typedCount}`;
    connection.typed.push(line);
    void current.send(`${line}\r`).catch(() => undefined);
  }, typeEveryMs);

  const follow = async () => {
    while (!stopped) {
      const terminal = via.terminal(sessionId, lastSeq > 0 ? { lastSeq } : {});
      current = terminal;
      const connection: Connection = { frames: [], typed: [] };
      connections.push(connection);
      for await (const frame of terminal.frames()) {
        connection.frames.push(frame);
        if (frame.kind === "bytes") lastSeq = Math.max(lastSeq, frame.seq);
      }
      connection.closed = await terminal.closed;
      current = undefined;
      if (FINAL_CODES.has(connection.closed.code) && !stopped) return;
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
  };
  const following = follow();

  return {
    connections,
    async stop() {
      stopped = true;
      clearInterval(typing);
      current?.close();
      await following;
    },
  };
}

/** The text a connection's byte frames carried. */
export const textOfConnection = (connection: Connection) => Buffer.concat(connection.frames.flatMap((frame) => (frame.kind === "bytes" ? [Buffer.from(frame.payload)] : []))).toString();

/**
 * The counter lines (`tick <n>`) a client saw across its connections, in order, each with whether
 * a `gap` frame came since the one before it.
 */
export function ticksSeen(connections: readonly Connection[]): { tick: number; afterGap: boolean }[] {
  const seen: { tick: number; afterGap: boolean }[] = [];
  let gap = false;
  let pending = "";
  for (const connection of connections) {
    for (const frame of connection.frames) {
      if (frame.kind === "control") {
        // A gap: bytes were lost, so a line begun before it is not continued after it.
        if (frame.message.type === "gap") [gap, pending] = [true, ""];
        continue;
      }
      pending += Buffer.from(frame.payload).toString();
      const lines = pending.split(/\r?\n/);
      pending = lines.pop() ?? "";
      for (const line of lines) {
        const match = /tick (\d+)$/.exec(line);
        if (!match) continue;
        seen.push({ tick: Number(match[1]), afterGap: gap });
        gap = false;
      }
    }
  }
  return seen;
}
