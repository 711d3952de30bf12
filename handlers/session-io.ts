import "./error-event.ts";
import type { Duplex } from "node:stream";
import type { Context } from "hono";
import type { WebSocket } from "ws";
import { SUPERVISOR_GONE, frameWriter, relayToClient } from "../src/internal/terminal-relay.ts";
import { CloseCodes } from "../src/contract/streams.ts";
import { FrameKind, type IoFrame } from "../src/internal/io-frames.ts";
import type { HandlerDeps } from "./support.ts";

/** Frames a client may send before the supervisor connection is open. */
const MAX_EARLY_FRAMES = 256;

/**
 * GET /v1/sessions/:id/io (WebSocket): checks run after the upgrade and answer with close
 * codes, because browsers cannot read an HTTP status on a failed upgrade (docs/api.md "Terminal (WebSocket)").
 * The origin check is made here; everything else by the supervisor, whose frames this
 * handler relays without interpreting them.
 */
export const sessionIo = (deps: HandlerDeps) =>
  deps.upgradeWebSocket((c: Context) => {
    const sessionId = c.req.param("id") ?? "";
    const origin = c.req.header("origin");
    const query = new URL(c.req.url).searchParams;
    let supervisor: Duplex | undefined;
    let toSupervisor: ((frame: IoFrame) => void) | undefined;
    let closed = false;
    const early: IoFrame[] = [];

    const forward = (frame: IoFrame) => {
      if (toSupervisor) toSupervisor(frame);
      else if (early.length < MAX_EARLY_FRAMES) early.push(frame);
    };

    return {
      onOpen(_event, ws) {
        if (deps.corsOrigins && (origin === undefined || !deps.corsOrigins.includes(origin))) {
          closed = true;
          ws.close(CloseCodes.forbiddenOrigin, "forbidden_origin");
          return;
        }
        const raw = ws.raw as WebSocket;
        // ws's own event, not onMessage: for every message @hono/node-ws would build a
        // MessageEvent and copy a binary one into an ArrayBuffer, per keystroke.
        raw.on("message", (data: Buffer, isBinary: boolean) =>
          forward(isBinary ? { kind: FrameKind.binary, bytes: data } : { kind: FrameKind.text, text: data.toString("utf8") }),
        );
        deps.supervisor.openTerminal(sessionId, query).then(
          (socket) => {
            if (closed) return socket.destroy();
            supervisor = socket;
            toSupervisor = frameWriter(socket);
            for (const frame of early.splice(0)) toSupervisor(frame);
            relayToClient(socket, raw, () => (closed = true));
          },
          () => {
            closed = true;
            ws.close(SUPERVISOR_GONE.code, SUPERVISOR_GONE.reason);
          },
        );
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
  }, { onError: (error: unknown) => deps.log?.warn("terminal websocket handler failed", { error }) });
