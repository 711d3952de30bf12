/** Reading the runner's streams in tests: events until a condition, terminal text until a marker. */
import type { RunnerClient, StreamItem, Terminal, TerminalFrame } from "../../src/client/index.ts";
import type { RunEvent } from "../../src/contract/wire.ts";

/** Collects events from the start until `stop` matches one (inclusive) or the stream ends. */
export async function eventsUntil(
  client: RunnerClient,
  sessionId: string,
  stop: (event: RunEvent) => boolean = () => false,
  options: { lastEventId?: number } = {},
): Promise<StreamItem[]> {
  const items: StreamItem[] = [];
  const abort = new AbortController();
  try {
    for await (const item of client.events(sessionId, { ...options, signal: abort.signal })) {
      items.push(item);
      if ("event" in item && stop(item.event)) break;
    }
  } finally {
    abort.abort();
  }
  return items;
}

export function eventsOf(items: StreamItem[]): RunEvent[] {
  return items.flatMap((item) => ("event" in item ? [item.event] : []));
}

export const isStatus = (kind: string) => (event: RunEvent) => event.type === "status" && event.status.kind === kind;

/** Reads frames until the accumulated output contains `marker`; returns every frame read. */
export async function framesUntilText(terminal: Terminal, marker: string): Promise<TerminalFrame[]> {
  const frames: TerminalFrame[] = [];
  let text = "";
  for await (const frame of terminal.frames()) {
    frames.push(frame);
    if (frame.kind === "bytes") text += Buffer.from(frame.payload).toString();
    if (text.includes(marker)) return frames;
  }
  throw new Error(`terminal closed before '${marker}' appeared; got: ${JSON.stringify(text)}`);
}

export function textOf(frames: TerminalFrame[]): string {
  return frames.map((frame) => (frame.kind === "bytes" ? Buffer.from(frame.payload).toString() : "")).join("");
}

/** Reads every remaining frame until the socket closes. */
export async function framesToClose(terminal: Terminal): Promise<TerminalFrame[]> {
  const frames: TerminalFrame[] = [];
  for await (const frame of terminal.frames()) frames.push(frame);
  return frames;
}
