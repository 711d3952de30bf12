import { PassThrough, Readable } from "node:stream";
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
  // The supervisor going away mid-stream (a restart, a crash) ends the client's stream cleanly,
  // and is one log line: the web server would otherwise print the socket error as it is.
  const relayed = new PassThrough();
  stream.once("error", (error) => {
    deps.log?.warn("event stream from the supervisor broke off", { sessionId: c.req.param("id"), error });
    relayed.end();
  });
  relayed.once("close", () => stream.destroy());
  stream.pipe(relayed);
  return new Response(Readable.toWeb(relayed) as ReadableStream<Uint8Array>, {
    status: 200,
    headers: {
      "content-type": "text/event-stream",
      "cache-control": "no-cache, no-transform",
      connection: "keep-alive",
      "x-accel-buffering": "no",
    },
  });
};
