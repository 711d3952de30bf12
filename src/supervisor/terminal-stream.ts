/**
 * Serves one app's byte channel (docs/api.md "Terminal (WebSocket)") over an upgraded internal connection. The
 * api process relays the frames to its WebSocket client unchanged. Like the event stream, it
 * is a follower of a replay ring (ring-follower.ts), so replay and live bytes take the same
 * path: nothing is lost or duplicated between snapshot and subscription.
 *
 * Fenced by the session's hold (docs/replicas.md "Fencing the data plane"): before any output goes
 * to the client and any input or resize to the pod, `holds()` is asked; once it answers no (a
 * replica resumed from a pause longer than its hold), the terminal is closed at once with the
 * retryable `1012`, what it had not sent is dropped (the new owner serves it), and input it
 * received and could not deliver is said lost in the close's reason.
 */
import type { Duplex } from "node:stream";
import * as v from "valibot";
import { CloseCodes, encodeByteFrame } from "../contract/streams.ts";
import { FrameDecoder, FrameKind, HEADER_BYTES, type IoFrame, encodeFrame, frameInPlace } from "../internal/io-frames.ts";
import { terminalBytesRelayed } from "../metrics/figures.ts";
import type { AppChannel, Session } from "../sessions/session.ts";
import { followRing } from "./ring-follower.ts";

const MAX_TERMINAL_SIZE = 10_000;
const MOVED_REASON = "session moved to another replica";
/** Input this replica received after its hold lapsed was not written: the client knows to type it again. */
const INPUT_LOST_REASON = "session moved to another replica; input not delivered";

const ControlFrameSchema = v.object({ type: v.string(), cols: v.optional(v.unknown()), rows: v.optional(v.unknown()) });

/** Sends a close frame and ends the connection; for refusals before any stream starts. */
export function refuseTerminal(socket: Duplex, code: number, reason: string): void {
  socket.end(encodeFrame({ kind: FrameKind.close, code, reason }));
}

export function streamTerminal(
  session: Session,
  app: AppChannel,
  socket: Duplex,
  lastSeq: number,
  resizeThrottleMs: number,
  holds: () => boolean,
): void {
  const bytes = app.bytes;
  if (session.terminal && bytes.nextId - 1 <= lastSeq) {
    return refuseTerminal(socket, CloseCodes.terminalNothingToReplay, "session terminal, nothing to replay");
  }

  session.addSubscriber();
  const send = (frame: IoFrame) => socket.write(encodeFrame(frame));
  /** How the follow ends: with a close frame, or (the api went away) by destroying the socket. */
  let close: { code: number; reason: string } | undefined;
  /** The hold lapsed: nothing more to the client or the pod. Returns true once so. */
  const lapsed = (inputLost: boolean) => {
    if (holds()) return false;
    close ??= { code: CloseCodes.serviceRestart, reason: inputLost ? INPUT_LOST_REASON : MOVED_REASON };
    return true;
  };
  const onControl = controlHandler(session, app, send, resizeThrottleMs, () => !lapsed(false));

  send({ kind: FrameKind.text, text: JSON.stringify({ type: "seq", seq: lastSeq, app: app.name, io: app.io }) });
  const follow = followRing(session, bytes, lastSeq, {
    socket,
    write: (seq, chunk) => {
      terminalBytesRelayed("out", chunk.bytes.byteLength);
      return socket.write(frameInPlace(encodeByteFrame(seq, chunk.tag, chunk.bytes, HEADER_BYTES))) ? "more" : "drain";
    },
    gap: () => send({ kind: FrameKind.text, text: JSON.stringify({ type: "gap", reason: "buffer_evicted" }) }),
    // Evicted: ends at once; moved: first sends what it holds (the seq to reconnect with is the
    // last), while this replica still holds the session; its hold lapsed: ends at once.
    stopBefore: () => {
      if (lapsed(false)) return true;
      if (session.disposed && !session.moved) close = disposedClose(session);
      return session.disposed && !session.moved;
    },
    doneWhenCaughtUp: () => {
      if (session.moved) close = disposedClose(session);
      else if (session.terminal) close = { code: CloseCodes.normal, reason: "session terminal" };
      return session.moved || session.terminal;
    },
    end: () => {
      onControl.cancel();
      session.removeSubscriber(Date.now());
      if (close && !socket.writableEnded) socket.end(encodeFrame({ kind: FrameKind.close, ...close }));
      else if (!socket.destroyed) socket.destroy();
    },
  });
  const finish = follow.stop;

  /** Stdin is dropped while no workload is live (starting, suspended, ended); never written once the hold lapsed. */
  const writeStdin = (parts: Buffer[]) => {
    if (parts.length === 0 || session.terminal || session.status.kind !== "running" || !session.workload) return;
    if (lapsed(true)) return finish();
    const bytes = parts.length === 1 ? parts[0]! : Buffer.concat(parts);
    terminalBytesRelayed("in", bytes.byteLength);
    session.workload.writeStdin(app.name, bytes);
  };
  readClientFrames(socket, writeStdin, (text) => onControl.handle(text), finish);
}

/**
 * What the client sends: stdin, control frames, and a close (or a malformed frame) that ends
 * the terminal. Consecutive stdin frames of one read reach the pod as one write (a terminal has
 * no message boundaries): one attach message instead of one per client message.
 */
function readClientFrames(socket: Duplex, writeStdin: (parts: Buffer[]) => void, onControl: (text: string) => void, finish: () => void): void {
  const decoder = new FrameDecoder();
  socket.on("data", (chunk: Buffer) => {
    let frames: IoFrame[];
    try {
      frames = decoder.push(chunk);
    } catch {
      return finish();
    }
    let stdin: Buffer[] = [];
    for (const frame of frames) {
      if (frame.kind === FrameKind.binary) {
        stdin.push(frame.bytes);
        continue;
      }
      writeStdin(stdin);
      stdin = [];
      if (frame.kind === FrameKind.text) onControl(frame.text);
      else return finish();
    }
    writeStdin(stdin);
  });
  // The upgraded socket is half-open capable: the api going away shows as 'end' first.
  socket.on("end", () => finish());
  socket.on("close", () => finish());
  socket.on("error", () => finish());
}

/**
 * The client's control frames: resizes, coalesced to one per throttle window (docs/api.md
 * "Terminal (WebSocket)"), refused with an error frame on a streams app; anything else is ignored.
 */
function controlHandler(session: Session, app: AppChannel, send: (frame: IoFrame) => boolean, throttleMs: number, mayWrite: () => boolean) {
  let pendingResize: { cols: number; rows: number } | undefined;
  let resizeTimer: NodeJS.Timeout | undefined;
  const flushResize = () => {
    resizeTimer = undefined;
    if (pendingResize && mayWrite()) session.workload?.resize(app.name, pendingResize.cols, pendingResize.rows);
    pendingResize = undefined;
  };
  return {
    handle(text: string): void {
      let parsed: unknown;
      try {
        parsed = JSON.parse(text);
      } catch {
        return;
      }
      const control = v.safeParse(ControlFrameSchema, parsed);
      if (!control.success || control.output.type !== "resize") return;
      if (app.io === "streams") {
        send({ kind: FrameKind.text, text: JSON.stringify({ type: "error", error: "resize_unsupported", io: "streams" }) });
        return;
      }
      const cols = terminalDimension(control.output.cols);
      const rows = terminalDimension(control.output.rows);
      if (cols === undefined || rows === undefined) return;
      pendingResize = { cols, rows };
      resizeTimer ??= setTimeout(flushResize, throttleMs);
    },
    cancel(): void {
      clearTimeout(resizeTimer);
    },
  };
}

/** Number(), finite, floored, at least 1, clamped to 10,000; else undefined (frame ignored). */
function terminalDimension(value: unknown): number | undefined {
  const number = Number(value);
  if (!Number.isFinite(number)) return undefined;
  const floored = Math.floor(number);
  return floored >= 1 ? Math.min(floored, MAX_TERMINAL_SIZE) : undefined;
}

/** A disposed session's close: moved to another replica (reconnect with the seq, the new owner has it), or gone. */
function disposedClose(session: Session): { code: number; reason: string } {
  return session.moved ? { code: CloseCodes.serviceRestart, reason: MOVED_REASON } : { code: CloseCodes.notFound, reason: "session not found" };
}
