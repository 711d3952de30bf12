import type { Duplex } from "node:stream";
import type { Context } from "hono";
import type { WSContext } from "hono/ws";
import type { WebSocket } from "ws";
import { CloseCodes } from "../src/contract/streams.ts";
import { FrameDecoder, FrameKind, type IoFrame, encodeFrame } from "../src/internal/io-frames.ts";
import type { HandlerDeps } from "./support.ts";

/** Above this many unsent bytes to a slow client, stop reading from the supervisor. */
const CLIENT_BUFFER_HIGH_WATER = 1024 * 1024;
/** Frames a client may send before the supervisor connection is open. */
const MAX_EARLY_FRAMES = 256;
const CLOSE_DRAIN_POLL_MS = 50;
const CLOSE_DRAIN_MAX_MS = 2_000;
/** Closed by the runner when the supervisor went away: clients reconnect (not a final code). */
const SUPERVISOR_GONE = { code: 1011, reason: "supervisor unavailable" };

/**
 * GET /v1/sessions/:id/io (WebSocket): checks run after the upgrade and answer with close
 * codes, because browsers cannot read an HTTP status on a failed upgrade (contract.md §6.1).
 * The origin check is made here; everything else by the supervisor, whose frames this
 * handler relays without interpreting them.
 */
export const sessionIo = (deps: HandlerDeps) =>
  deps.upgradeWebSocket((c: Context) => {
    const sessionId = c.req.param("id") ?? "";
    const origin = c.req.header("origin");
    const query = new URL(c.req.url).searchParams;
    let supervisor: Duplex | undefined;
    let closed = false;
    const early: IoFrame[] = [];

    const forward = (frame: IoFrame) => {
      if (supervisor) supervisor.write(encodeFrame(frame));
      else if (early.length < MAX_EARLY_FRAMES) early.push(frame);
    };

    return {
      onOpen(_event, ws) {
        if (deps.corsOrigins && (origin === undefined || !deps.corsOrigins.includes(origin))) {
          closed = true;
          ws.close(CloseCodes.forbiddenOrigin, "forbidden_origin");
          return;
        }
        deps.supervisor.openTerminal(sessionId, query).then(
          (socket) => {
            if (closed) return socket.destroy();
            supervisor = socket;
            for (const frame of early.splice(0)) socket.write(encodeFrame(frame));
            relayToClient(socket, ws, () => (closed = true));
          },
          () => {
            closed = true;
            ws.close(SUPERVISOR_GONE.code, SUPERVISOR_GONE.reason);
          },
        );
      },
      onMessage(event) {
        if (typeof event.data === "string") forward({ kind: FrameKind.text, text: event.data });
        else if (event.data instanceof ArrayBuffer) forward({ kind: FrameKind.binary, bytes: Buffer.from(event.data) });
      },
      onClose() {
        closed = true;
        supervisor?.destroy();
      },
      onError() {
        closed = true;
        supervisor?.destroy();
      },
    };
  });

function relayToClient(socket: Duplex, ws: WSContext, markClosed: () => void): void {
  const raw = ws.raw as WebSocket;
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
