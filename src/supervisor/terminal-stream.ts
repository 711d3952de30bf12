/**
 * Serves one app's byte channel (docs/api.md "Terminal (WebSocket)") as the client's WebSocket
 * itself: the api splices the client's connection to this one and parses nothing
 * (docs/relay.md "The terminal"). Like the event stream, it is a follower of a replay ring
 * (ring-follower.ts), so replay and live bytes take the same path: nothing is lost or
 * duplicated between snapshot and subscription. A slow client costs a cursor: the follower
 * waits while more than 1 MiB is unsent to the connection.
 *
 * Fenced by the session's hold (docs/replicas.md "Fencing the data plane"): before any output goes
 * to the client and any input or resize to the pod, `holds()` is asked; once it answers no (a
 * replica resumed from a pause longer than its hold), the terminal is closed at once with the
 * retryable `1012`, what it had not sent is dropped (the new owner serves it), and input it
 * received and could not deliver is said lost in the close's reason.
 */
import * as v from "valibot";
import type { WebSocket } from "ws";
import { CloseCodes, encodeByteFrame } from "../contract/streams.ts";
import { terminalBytesRelayed } from "../metrics/figures.ts";
import type { AppChannel, Session } from "../sessions/session.ts";
import { type RingSink, followRing } from "./ring-follower.ts";

const MAX_TERMINAL_SIZE = 10_000;
/** Unsent bytes past which the follower waits for the connection to drain. */
export const OUTPUT_CEILING_BYTES = 1024 * 1024;
const MOVED_REASON = "session moved to another replica";
/** Input this replica received after its hold lapsed was not written: the client knows to type it again. */
const INPUT_LOST_REASON = "session moved to another replica; input not delivered";

const ControlFrameSchema = v.object({ type: v.string(), cols: v.optional(v.unknown()), rows: v.optional(v.unknown()) });

type Close = { code: number; reason: string };

/**
 * ws keeps its socket private; the follower corks it while a pump writes (one write for what
 * one change made available) and waits for its `drain`.
 */
function rawSocket(ws: WebSocket): RingSink<unknown>["socket"] {
  return (ws as unknown as { _socket: RingSink<unknown>["socket"] })._socket;
}

export function streamTerminal(session: Session, app: AppChannel, ws: WebSocket, lastSeq: number, resizeThrottleMs: number, holds: () => boolean): void {
  const bytes = app.bytes;
  if (session.terminal && bytes.nextId - 1 <= lastSeq) {
    return ws.close(CloseCodes.terminalNothingToReplay, "session terminal, nothing to replay");
  }

  session.addSubscriber();
  const sendText = (message: object) => ws.send(JSON.stringify(message));
  /** How the follow ends: with a close frame, or (the api went away) by ending the socket. */
  let close: Close | undefined;
  /** The hold lapsed: nothing more to the client or the pod. Returns true once so. */
  const lapsed = (inputLost: boolean) => {
    if (holds()) return false;
    close ??= { code: CloseCodes.serviceRestart, reason: inputLost ? INPUT_LOST_REASON : MOVED_REASON };
    return true;
  };
  const onControl = controlHandler(session, app, sendText, resizeThrottleMs, () => !lapsed(false));

  sendText({ type: "seq", seq: lastSeq, app: app.name, io: app.io });
  const follow = followRing(session, bytes, lastSeq, {
    socket: rawSocket(ws),
    write: (seq, chunk) => {
      terminalBytesRelayed("out", chunk.bytes.byteLength);
      ws.send(encodeByteFrame(seq, chunk.tag, chunk.bytes));
      return ws.bufferedAmount < OUTPUT_CEILING_BYTES ? "more" : "drain";
    },
    gap: () => sendText({ type: "gap", reason: "buffer_evicted" }),
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
      // A close frame leaves after what was sent before it: the client has it all first. A close
      // handshake already under way (the client's, or ws's own 1009) is left to finish.
      if (close && ws.readyState === ws.OPEN) ws.close(close.code, close.reason);
      else if (ws.readyState === ws.OPEN) ws.terminate();
    },
  });
  const finish = follow.stop;

  /** Stdin is dropped while no workload is live (starting, suspended, ended); never written once the hold lapsed. */
  const writeStdin = (parts: Buffer[]) => {
    if (parts.length === 0 || session.terminal || session.status.kind !== "running" || !session.workload) return;
    if (lapsed(true)) return finish();
    const input = parts.length === 1 ? parts[0]! : Buffer.concat(parts);
    terminalBytesRelayed("in", input.byteLength);
    session.workload.writeStdin(app.name, input);
  };
  readClientMessages(ws, writeStdin, (text) => onControl.handle(text), finish);
}

/**
 * What the client sends: stdin, control frames, and its close (or a broken connection), which
 * ends the terminal. The stdin messages of one read reach the pod as one write (a terminal has
 * no message boundaries): ws hands over the messages of one read in one pass, and they are
 * written at the end of it, or before a control frame that follows them.
 */
function readClientMessages(ws: WebSocket, writeStdin: (parts: Buffer[]) => void, onControl: (text: string) => void, finish: () => void): void {
  let stdin: Buffer[] = [];
  const flush = () => {
    const parts = stdin;
    stdin = [];
    writeStdin(parts);
  };
  ws.on("message", (data: Buffer, isBinary: boolean) => {
    if (isBinary) {
      if (stdin.length === 0) process.nextTick(flush);
      stdin.push(data);
      return;
    }
    flush();
    onControl(data.toString("utf8"));
  });
  ws.on("close", finish);
  ws.on("error", finish);
}

/**
 * The client's control frames: resizes, coalesced to one per throttle window (docs/api.md
 * "Terminal (WebSocket)"), refused with an error frame on a streams app; anything else is ignored.
 */
function controlHandler(session: Session, app: AppChannel, sendText: (message: object) => void, throttleMs: number, mayWrite: () => boolean) {
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
        sendText({ type: "error", error: "resize_unsupported", io: "streams" });
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
