/**
 * An SSE body written to the client's socket straight from the supervisor's stream: no web
 * stream in between and nothing of the request's context kept for the stream's life. `pipe`
 * carries backpressure end to end (client socket → this response → the HTTP/2 stream's window
 * → the supervisor's follower), so a slow client holds back only its own stream.
 */
import type { ServerResponse } from "node:http";
import { type ClientHttp2Stream, constants } from "node:http2";

export const SSE_HEADERS = {
  "content-type": "text/event-stream",
  "cache-control": "no-cache, no-transform",
  connection: "keep-alive",
  "x-accel-buffering": "no",
};

export function relaySse(source: ClientHttp2Stream, out: ServerResponse, headers: Headers, onBreak: (error: Error) => void): void {
  // The supervisor going away mid-stream (a restart, a crash) is one log line, never an
  // unhandled stream error; the 'close' below cuts the client's stream.
  let broken: Error | undefined;
  source.once("error", (error) => (broken = error));
  // The client may have gone while the stream was being opened: its 'close' has been and gone.
  if (out.destroyed || out.socket === null || out.socket.destroyed) {
    source.close(constants.NGHTTP2_CANCEL);
    return;
  }
  const head: Record<string, string> = {};
  headers.forEach((value, name) => (head[name] = value));
  out.writeHead(200, head);
  out.flushHeaders();
  source.pipe(out);
  // The client went away: the supervisor's follower stops.
  out.once("close", () => {
    if (!source.destroyed) source.close(constants.NGHTTP2_CANCEL);
  });
  // Cut rather than ended when the supervisor went away, so the client knows to come back.
  source.once("close", () => {
    // A supervisor that went away may leave the stream "ended" but reset (its session closed).
    if (out.destroyed || (source.readableEnded && source.rstCode === constants.NGHTTP2_NO_ERROR)) return;
    onBreak(broken ?? new Error(`the supervisor's stream closed before its end (HTTP/2 code ${source.rstCode})`));
    out.destroy();
  });
}
