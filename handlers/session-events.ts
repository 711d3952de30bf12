import { ServerResponse } from "node:http";
import { Readable } from "node:stream";
import { RESPONSE_ALREADY_SENT } from "@hono/node-server/utils/response";
import type { Handler } from "hono";
import { SSE_HEADERS, relaySse } from "../src/internal/sse-relay.ts";
import { parseCursor } from "../src/internal/protocol.ts";
import { type HandlerDeps, withOwner } from "./support.ts";

/**
 * GET /v1/sessions/:id/events: the SSE stream from the supervisor. On node's HTTP server
 * (ours, or a host's under @hono/node-server) it is written to the client's socket directly and
 * the handler returns at once, so no middleware or context waits for the stream's end; on any
 * other server it is a web stream. A client that goes away ends the internal stream.
 */
export const sessionEvents = (deps: HandlerDeps): Handler => async (c) => {
  // Last-Event-ID wins over ?lastEventId; an invalid value means "from the start".
  const afterId = parseCursor(c.req.header("last-event-id")) ?? parseCursor(c.req.query("lastEventId")) ?? 0;
  const sessionId = c.req.param("id") ?? "";
  // An unknown session is a RunnerError (404), relayed by the routes' error handler; one
  // between replicas is waited for, since an EventSource answered 503 does not come back.
  const stream = await withOwner(deps, sessionId, "stream", (supervisor) => supervisor.events(sessionId, afterId), c.req.raw.signal);
  // The head as the middleware prepared it (CORS, request id), with the stream's own fields.
  const head = c.newResponse(null, 200, deps.corsOrigins ? { ...SSE_HEADERS, vary: "Origin" } : SSE_HEADERS);
  const outgoing = (c.env as { outgoing?: unknown } | undefined)?.outgoing;
  if (outgoing instanceof ServerResponse) {
    relaySse(stream, outgoing, head.headers, (error) => deps.log?.warn("event stream from the supervisor broke off", { sessionId, error }));
    return RESPONSE_ALREADY_SENT;
  }
  return new Response(Readable.toWeb(stream) as ReadableStream<Uint8Array>, { status: 200, headers: head.headers });
};
