/**
 * The api side of a terminal: relays the supervisor's frames to the client's WebSocket as they
 * are (text, binary, close), with the contract's drain-then-close (docs/api.md) and
 * backpressure: while the client has more than 1 MiB unsent, the supervisor's stream is paused,
 * so its HTTP/2 window closes, the supervisor's follower waits, and other streams of the same
 * connection go on.
 */
import { type ClientHttp2Stream, constants } from "node:http2";
import type { Writable } from "node:stream";
import type { WebSocket } from "ws";
import { isSessionMoving } from "../contract/problem.ts";
import { FrameDecoder, FrameKind, type IoFrame, encodeFrame } from "./io-frames.ts";

const CLIENT_BUFFER_HIGH_WATER = 1024 * 1024;
const CLOSE_DRAIN_POLL_MS = 50;
const CLOSE_DRAIN_MAX_MS = 2_000;
/** Closed by the runner when the supervisor went away: clients reconnect (not a final code). */
export const SUPERVISOR_GONE = { code: 1011, reason: "supervisor unavailable" };
/** Closed when the session stayed between runner replicas longer than the api waits: clients reconnect. */
export const SESSION_MOVING = { code: 1012, reason: "session moving between runner replicas; reconnect" };

/**
 * Writes the client's frames (stdin, control) to the supervisor. The messages of one client
 * read arrive in one synchronous pass; the stream stays corked until that pass is over, so they
 * leave in one write, which the supervisor hands to the pod as one stdin write.
 */
export function frameWriter(socket: Writable): (frame: IoFrame) => void {
  let corked = false;
  return (frame) => {
    if (!corked) {
      corked = true;
      socket.cork();
      process.nextTick(() => {
        corked = false;
        socket.uncork();
      });
    }
    socket.write(encodeFrame(frame));
  };
}

type ClientSocket = { cork(): void; uncork(): void; once(event: "drain", listener: () => void): unknown };

/**
 * ws keeps its socket private; corking it makes one write of the messages of one pass, and its
 * `drain` says when the client has taken what was queued.
 */
function clientSocket(raw: WebSocket): ClientSocket | undefined {
  return (raw as unknown as { _socket?: ClientSocket })._socket;
}

/**
 * Joins a client's WebSocket to the terminal stream `open` gives: the client's messages go to
 * the supervisor, its frames to the client. Either side going away ends the other; `open` is
 * told (its signal) when the client leaves before the stream is open.
 */
export function relayTerminal(raw: WebSocket, open: (clientGone: AbortSignal) => Promise<ClientHttp2Stream>): void {
  let stream: ClientHttp2Stream | undefined;
  let toSupervisor: ((frame: IoFrame) => void) | undefined;
  let closed = false;
  // Until the stream is open the client's socket is not read: its messages wait in TCP rather
  // than here. What ws had already read when paused is held; dropping any of it would lose
  // keystrokes a client sent at once (a paste), which a slow open under load made happen.
  raw.pause();
  const early: IoFrame[] = [];
  raw.on("message", (data: Buffer, isBinary: boolean) => {
    const frame: IoFrame = isBinary ? { kind: FrameKind.binary, bytes: data } : { kind: FrameKind.text, text: data.toString("utf8") };
    if (toSupervisor) toSupervisor(frame);
    else early.push(frame);
  });
  const left = new AbortController();
  const clientGone = () => {
    closed = true;
    left.abort();
    if (stream && !stream.destroyed) stream.close(constants.NGHTTP2_CANCEL);
  };
  raw.once("close", clientGone);
  raw.on("error", clientGone);
  open(left.signal).then(
    (opened) => {
      if (closed) return opened.close(constants.NGHTTP2_CANCEL);
      stream = opened;
      toSupervisor = frameWriter(opened);
      for (const frame of early.splice(0)) toSupervisor(frame);
      raw.resume();
      relayToClient(opened, raw, () => (closed = true));
    },
    (error: unknown) => {
      closed = true;
      // Read again, so the client's answering close frame ends the socket at once.
      raw.resume();
      const { code, reason } = isSessionMoving(error) ? SESSION_MOVING : SUPERVISOR_GONE;
      raw.close(code, reason);
    },
  );
}

export function relayToClient(stream: ClientHttp2Stream, raw: WebSocket, markClosed: () => void): void {
  const decoder = new FrameDecoder();
  let closing = false;

  /**
   * Over the ceiling, the stream is paused until the client's socket drains. One `drain`
   * listener per pause rather than a send callback per message: the callbacks cost a closure
   * and a call for every frame relayed and were the only reason to have them.
   */
  const pauseUntilDrained = () => {
    if (raw.bufferedAmount < CLIENT_BUFFER_HIGH_WATER || stream.isPaused()) return;
    stream.pause();
    const resumeWhenDrained = () => {
      if (stream.destroyed || raw.readyState !== raw.OPEN) return;
      if (raw.bufferedAmount < CLIENT_BUFFER_HIGH_WATER) stream.resume();
      else clientSocket(raw)?.once("drain", resumeWhenDrained);
    };
    // A WebSocket without its socket has closed: its close handlers end the stream.
    clientSocket(raw)?.once("drain", resumeWhenDrained);
  };
  const closeAfterDrain = (code: number, reason: string) => {
    closing = true;
    markClosed();
    const deadline = Date.now() + CLOSE_DRAIN_MAX_MS;
    const attempt = () => {
      if (raw.bufferedAmount === 0 || Date.now() >= deadline) raw.close(code, reason);
      else setTimeout(attempt, CLOSE_DRAIN_POLL_MS);
    };
    attempt();
  };

  stream.on("data", (chunk: Buffer) => {
    let frames: IoFrame[];
    try {
      frames = decoder.push(chunk);
    } catch {
      stream.destroy();
      return;
    }
    // One chunk's frames (each its own message, with its own seq) leave in one socket write.
    const socket = clientSocket(raw);
    socket?.cork();
    try {
      for (const frame of frames) {
        if (closing) return;
        if (frame.kind === FrameKind.text) raw.send(frame.text);
        else if (frame.kind === FrameKind.binary) raw.send(frame.bytes);
        else closeAfterDrain(frame.code, frame.reason);
      }
    } finally {
      socket?.uncork();
    }
    pauseUntilDrained();
  });
  const supervisorGone = () => {
    if (!closing && raw.readyState === raw.OPEN) closeAfterDrain(SUPERVISOR_GONE.code, SUPERVISOR_GONE.reason);
  };
  // The supervisor ended its side (after a close frame, or going away): end ours too.
  stream.on("end", () => {
    supervisorGone();
    if (!stream.destroyed) stream.close();
  });
  stream.on("close", supervisorGone);
  stream.on("error", () => stream.destroy());
}
