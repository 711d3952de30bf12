/**
 * A client of a session whose app prints a counter (`tick <n>`, the simulated app's `tick-ms`)
 * across replica handovers: what its terminal showed, by counter value and by seq, and the
 * reconnect with the last seq until some replica serves the terminal again.
 */
import type { RunnerClient, Terminal, TerminalFrame } from "../../src/client/index.ts";
import { textOf } from "./streams.ts";
import { waitFor } from "./wait.ts";

/** The counter values in the order they appear. */
export const ticksOf = (text: string) => [...text.matchAll(/tick (\d+)\r?\n/g)].map((match) => Number(match[1]));
export const seqsOf = (frames: TerminalFrame[]) => frames.flatMap((frame) => (frame.kind === "bytes" ? [frame.seq] : []));
export const gapsIn = (frames: TerminalFrame[]) => frames.filter((frame) => frame.kind === "control" && frame.message.type === "gap").length;

/** Reads frames until the text holds the counter's `tick <n>` (or the socket closes); returns them. */
export async function readUntilTick(terminal: Terminal, n: number, frames: TerminalFrame[] = []): Promise<TerminalFrame[]> {
  for await (const frame of terminal.frames()) {
    frames.push(frame);
    if (ticksOf(textOf(frames)).some((tick) => tick >= n)) return frames;
  }
  return frames;
}

/** Reconnects with `lastSeq` through `via` until a replica serves the terminal again (it is moving meanwhile). */
export function reconnectTerminal(via: RunnerClient, sessionId: string, lastSeq: number, timeoutMs: number) {
  return waitFor("the terminal served again", async () => {
    const terminal = via.terminal(sessionId, { lastSeq });
    const first = await terminal.frames().next();
    if (!first.done && first.value.kind === "control" && first.value.message.type === "seq") return { terminal, first: first.value };
    terminal.close();
    await new Promise((resolve) => setTimeout(resolve, 250));
    return undefined;
  }, timeoutMs);
}
