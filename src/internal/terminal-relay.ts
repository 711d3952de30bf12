/**
 * The api side of a terminal: relays the supervisor's frames to the client's WebSocket as they
 * are (text, binary, close), with the contract's drain-then-close (docs/api.md "Terminal (WebSocket)") and
 * backpressure: while the client has more than 1 MiB unsent, the supervisor connection is
 * paused, so a slow client holds that much here at most and the supervisor's follower waits.
 */
import type { Duplex, Writable } from "node:stream";
import type { WebSocket } from "ws";
import { FrameDecoder, FrameKind, type IoFrame, encodeFrame } from "./io-frames.ts";

const CLIENT_BUFFER_HIGH_WATER = 1024 * 1024;
const CLOSE_DRAIN_POLL_MS = 50;
const CLOSE_DRAIN_MAX_MS = 2_000;
/** Closed by the runner when the supervisor went away: clients reconnect (not a final code). */
export const SUPERVISOR_GONE = { code: 1011, reason: "supervisor unavailable" };

/**
 * Writes the client's frames (stdin, control) to the supervisor. The messages of one client
 * read arrive in one synchronous pass; the socket stays corked until that pass is over, so they
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

export function relayToClient(socket: Duplex, raw: WebSocket, markClosed: () => void): void {
  const decoder = new FrameDecoder();
  let closing = false;

  const resumeWhenDrained = () => {
    if (raw.bufferedAmount < CLIENT_BUFFER_HIGH_WATER && socket.isPaused()) socket.resume();
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

  socket.on("data", (chunk: Buffer) => {
    let frames: IoFrame[];
    try {
      frames = decoder.push(chunk);
    } catch {
      socket.destroy();
      return;
    }
    for (const frame of frames) {
      if (closing) return;
      if (frame.kind === FrameKind.text) raw.send(frame.text, resumeWhenDrained);
      else if (frame.kind === FrameKind.binary) raw.send(frame.bytes, resumeWhenDrained);
      else closeAfterDrain(frame.code, frame.reason);
    }
    if (raw.bufferedAmount >= CLIENT_BUFFER_HIGH_WATER) socket.pause();
  });
  const supervisorGone = () => {
    if (!closing && raw.readyState === raw.OPEN) closeAfterDrain(SUPERVISOR_GONE.code, SUPERVISOR_GONE.reason);
  };
  socket.on("end", supervisorGone);
  socket.on("close", supervisorGone);
  socket.on("error", () => socket.destroy());
}
