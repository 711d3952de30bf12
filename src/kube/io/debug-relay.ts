/**
 * The debug relay (docs/api.md "Debug and port events"; docs/kubernetes.md "Reachability and the debug stream"): follows the kernel inspector's
 * `text/event-stream` inside a session pod and hands every parsed frame on. The pod may still be
 * booting or its kernel restarting, so every failure is answered the same way: wait and
 * reconnect, until the session's signal aborts; each reconnect says why on the debug log, and a
 * consumer that throws is logged as the runner bug it is. Resuming with `last-event-id` keeps a reconnect
 * from replaying (and re-counting) frames already delivered; an inspector without ids replays
 * its buffer, which is recognised and skipped.
 */
import { setTimeout as sleep } from "node:timers/promises";
import { request } from "undici";
import * as v from "valibot";
import { SseParser } from "../../contract/sse.ts";
import { type DebugFrame, DebugFrameSchema } from "../../contract/wire.ts";
import type { Logger } from "../../log.ts";

const DEFAULT_RETRY_MS = 500;

/** The frame a block's data carries, or undefined for anything that is not a JSON frame object. */
function frameOf(data: string): DebugFrame | undefined {
  let parsed: unknown;
  try {
    parsed = JSON.parse(data);
  } catch {
    return undefined;
  }
  // valibot's object schemas accept arrays; a frame is a JSON object.
  if (Array.isArray(parsed)) return undefined;
  const frame = v.safeParse(DebugFrameSchema, parsed);
  return frame.success ? frame.output : undefined;
}

/**
 * The longest event kept while waiting for its end. The stream comes from a sandboxed pod: an
 * event that never ends must not grow the supervisor's memory without bound.
 */
export const MAX_BLOCK_CHARS = 1024 * 1024;

/**
 * What survives a reconnect: the id of the last frame handed on, and for streams without `id:`
 * lines (the real kernel's, which replays its whole buffer to every connection) the frames
 * handed on, so that a replay is recognised and not relayed twice.
 */
interface RelayState {
  lastId: number | undefined;
  delivered: string[];
}

/** Frames remembered for recognising a replay; a kernel's own buffer is bounded too. */
const REMEMBERED_FRAMES = 10_000;

/**
 * Recognises, at the start of a connection, the frames an id-less inspector replays: the first
 * frame is looked up among those delivered, and from there each next frame must be the next
 * delivered one. The first frame that is not ends the replay; everything from it on is new (a
 * restarted kernel's first frame, with its own timestamp, is never among them).
 */
class ReplayFilter {
  #position: number | undefined;
  #replaying: boolean;

  constructor(private readonly state: RelayState) {
    this.#replaying = state.delivered.length > 0;
  }

  /** True when `data` is a replayed frame, to be skipped. */
  replayed(data: string): boolean {
    if (!this.#replaying) return false;
    const delivered = this.state.delivered;
    const at = this.#position === undefined ? delivered.indexOf(data) : this.#position;
    if (at >= 0 && at < delivered.length && delivered[at] === data) {
      this.#position = at + 1;
      return true;
    }
    this.#replaying = false;
    return false;
  }

  remember(data: string): void {
    const delivered = this.state.delivered;
    delivered.push(data);
    if (delivered.length > REMEMBERED_FRAMES) delivered.splice(0, delivered.length - REMEMBERED_FRAMES);
  }
}

/**
 * One connection: returns why it ended when the stream ends or is refused; throws on connection
 * errors and abort.
 */
async function followOnce(
  url: string,
  onFrame: (frame: DebugFrame) => void,
  signal: AbortSignal,
  state: RelayState,
  log: Logger,
): Promise<string> {
  const headers: Record<string, string> = { accept: "text/event-stream" };
  if (state.lastId !== undefined && state.lastId > 0) headers["last-event-id"] = String(state.lastId);
  // undici's default body timeout stays: a stream silent for minutes is re-established, which
  // also notices a connection that died without a FIN (a pod network gone quiet).
  const { statusCode, body } = await request(url, { method: "GET", headers, signal });
  if (statusCode < 200 || statusCode > 299) {
    await body.dump();
    return `the inspector answered ${statusCode}`;
  }
  const decoder = new TextDecoder();
  // All leading whitespace of a value is dropped, as the reference relay does.
  const parser = new SseParser({ valueStart: "trimStart", maxEventChars: MAX_BLOCK_CHARS });
  const replays = new ReplayFilter(state);
  for await (const chunk of body) {
    for (const { data, id } of parser.push(decoder.decode(chunk as Buffer, { stream: true }))) {
      if (signal.aborted) return "stopped";
      const frame = frameOf(data);
      if (frame === undefined) continue;
      // A stream with ids resumes after the last one; only an id-less one replays.
      if (id === undefined) {
        if (replays.replayed(data)) continue;
        replays.remember(data);
      }
      try {
        onFrame(frame);
      } catch (error) {
        // The consumer's failure is not the stream's: replaying the frame on a reconnect would
        // only fail again, so it counts as delivered and the relay goes on.
        log.error("handling a debug frame failed", { url, event: frame.event, error });
      }
      // Recorded only after delivery, so a drop before this point replays the frame, never skips it.
      if (id !== undefined && id !== "" && Number.isFinite(Number(id))) state.lastId = Number(id);
    }
  }
  return "the stream ended";
}

/**
 * Relays `GET <url>` (`accept: text/event-stream`) until `signal` aborts, reconnecting every
 * `retryMs` (default 500) after a connection error, a non-2xx answer, an empty body or the end
 * of the stream. Comments, blocks without data and data that is not a JSON frame are skipped.
 * Resolves once aborted; never rejects.
 */
export async function relayDebugStream(
  url: string,
  onFrame: (frame: DebugFrame) => void,
  signal: AbortSignal,
  options: { log: Logger; retryMs?: number },
): Promise<void> {
  const { log } = options;
  const retryMs = options.retryMs ?? DEFAULT_RETRY_MS;
  const state: RelayState = { lastId: undefined, delivered: [] };
  while (!signal.aborted) {
    let reason: string;
    try {
      reason = await followOnce(url, onFrame, signal, state, log);
    } catch (error) {
      // Refused, reset or timed out; or aborted, which the loop condition tells.
      reason = error instanceof Error ? error.message : String(error);
    }
    if (signal.aborted) break;
    // Debug level: a booting pod refuses for seconds, which is expected and says nothing new.
    log.debug("debug stream reconnecting", { url, reason, inMs: retryMs });
    await sleep(retryMs, undefined, { signal }).catch(() => undefined);
  }
}
