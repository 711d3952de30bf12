import { Readable } from "node:stream";
import type { Handler } from "hono";
import { parseCursor } from "../src/internal/protocol.ts";
import type { HandlerDeps } from "./support.ts";

/**
 * GET /v1/sessions/:id/events: the SSE stream, piped from the supervisor. Backpressure runs
 * end to end (client socket → this response → the internal socket → the supervisor's
 * follower), and a client that goes away cancels the stream, which ends the internal request.
 */
export const sessionEvents = (deps: HandlerDeps): Handler => async (c) => {
  // Last-Event-ID wins over ?lastEventId; an invalid value means "from the start".
  const afterId = parseCursor(c.req.header("last-event-id")) ?? parseCursor(c.req.query("lastEventId")) ?? 0;
  // An unknown session is a RunnerError (404), relayed by the routes' error handler.
  const stream = await deps.supervisor.events(c.req.param("id") ?? "", afterId);
  return new Response(Readable.toWeb(stream) as ReadableStream<Uint8Array>, {
    status: 200,
    headers: {
      "content-type": "text/event-stream",
      "cache-control": "no-cache, no-transform",
      connection: "keep-alive",
      "x-accel-buffering": "no",
    },
  });
};
