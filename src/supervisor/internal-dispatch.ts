/**
 * One stream of the internal protocol, served: each relayed route's body is validated with the
 * route's schema, its answer is the route's success status, and a Problem (raised by the core,
 * or here for a message no route takes) becomes its error answer. The event stream is answered
 * with its head at once and then written as the session goes. The terminal is not an HTTP/2
 * stream: it is a WebSocket upgrade on a connection of its own (terminal-upgrades.ts).
 */
import type { IncomingHttpHeaders, ServerHttp2Stream } from "node:http2";
import * as v from "valibot";
import { Problem, problemAnswer } from "../contract/problem.ts";
import { INTERNAL_PREFIX, type RouteName, type RouteSpec, TERMS_HEADER, findRoute, routes } from "../contract/routes.ts";
import { EVENTS_AFTER_QUERY, INTERNAL_PROTOCOL_VERSION, PROTOCOL_HEADER, parseCursor } from "../internal/protocol.ts";
import type { Logger } from "../log.ts";
import { SpanKind, inStepSpan } from "../observability/tracing.ts";
import { streamEvents } from "./event-stream.ts";
import { type RouteInputs, implementations } from "./route-implementations.ts";
import type { SessionService } from "./session-service.ts";
import { servedElsewhere } from "./problems.ts";

const MAX_MESSAGE_BYTES = 8 * 1024 * 1024;
const VERSION = { [PROTOCOL_HEADER]: INTERNAL_PROTOCOL_VERSION };

/** A message the api process should never send: a bug or a mismatched build, answered with 400. */
const badMessage = (message: string) => new Problem("invalid", "bad_internal_message", message);

type Answer = { status: number; body?: unknown };

function readJson(stream: ServerHttp2Stream): Promise<unknown> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    stream.on("data", (chunk: Buffer) => {
      size += chunk.byteLength;
      if (size > MAX_MESSAGE_BYTES) {
        reject(badMessage("internal message too large"));
        stream.pause();
        return;
      }
      chunks.push(chunk);
    });
    stream.once("end", () => {
      try {
        resolve(chunks.length === 0 ? undefined : JSON.parse(Buffer.concat(chunks).toString("utf8")));
      } catch {
        reject(badMessage("internal message is not JSON"));
      }
    });
    stream.once("error", reject);
  });
}

/** The route's input from the request: parameters, pass-through query, validated body, terms. */
async function inputOf(spec: RouteSpec, params: Record<string, string>, url: URL, stream: ServerHttp2Stream, headers: IncomingHttpHeaders): Promise<RouteInputs> {
  let body: unknown;
  if (spec.body) {
    const result = v.safeParse(spec.body, await readJson(stream));
    if (!result.success) throw badMessage(`invalid internal message: ${v.summarize(result.issues)}`);
    body = result.output;
  }
  const query = Object.fromEntries((spec.query ?? []).map((name) => [name, url.searchParams.get(name) ?? undefined]));
  const terms = headers[TERMS_HEADER];
  return { params, query, body, acceptedTerms: spec.terms && typeof terms === "string" ? terms : undefined };
}

export function answer(stream: ServerHttp2Stream, outcome: Answer): void {
  if (stream.destroyed || stream.headersSent) return;
  if (outcome.body === undefined) {
    stream.respond({ ":status": outcome.status, ...VERSION }, { endStream: true });
    return;
  }
  const payload = JSON.stringify(outcome.body);
  stream.respond({ ":status": outcome.status, ...VERSION, "content-type": "application/json", "content-length": Buffer.byteLength(payload) });
  stream.end(payload);
}

/** The SSE stream: its head now, its events as the session goes. */
function serveEvents(service: SessionService, id: string, url: URL, stream: ServerHttp2Stream): void {
  const session = service.session(id);
  stream.respond({ ":status": 200, ...VERSION, "content-type": "text/event-stream" });
  streamEvents(session, stream, parseCursor(url.searchParams.get(EVENTS_AFTER_QUERY)) ?? 0, service.timings.heartbeatMs, () => service.ownership.holds(id));
}

/**
 * A stream's error listener. Not a closure made per stream: it stays on an event stream's
 * stream for its whole life and would keep the dispatch's scope (its URL) with it.
 */
function ignoreError(): void {}

export function createDispatch(service: SessionService, log: Logger) {
  const handlers = implementations(service);

  const dispatch = async (stream: ServerHttp2Stream, headers: IncomingHttpHeaders, method: string, url: URL): Promise<Answer | undefined> => {
    const found = findRoute(INTERNAL_PREFIX, method, url.pathname, ["relayed", "internal", "events"]);
    if (!found) throw new Problem("not_found", "no_such_internal_route", `${method} ${url.pathname}`);
    const [name, params] = found as [RouteName, Record<string, string>];
    // A session this process does not serve now (another replica's, between replicas, or one
    // whose hold lapsed during a pause) is refused with 503, an event stream too;
    // the api asks again as the placement moves, and refuses its client only if no owner comes
    // (docs/replicas.md).
    if (params.id !== undefined && service.servedElsewhere(params.id)) throw servedElsewhere(params.id);
    if (name === "sessionEvents") {
      serveEvents(service, params.id ?? "", url, stream);
      return undefined;
    }
    const spec = routes[name];
    const handler = handlers[name as keyof typeof handlers] as (input: RouteInputs) => unknown;
    // A server span when the api's call is traced: the start's and the stop's Kubernetes calls
    // are its children.
    const attributes = { "http.request.method": method, "http.route": INTERNAL_PREFIX + spec.path, ...(params.id !== undefined && { "k8s_runner.session_id": params.id }) };
    return inStepSpan(`${method} ${INTERNAL_PREFIX}${spec.path}`, SpanKind.SERVER, attributes, async (span) => {
      const input = await inputOf(spec, params, url, stream, headers);
      // Asked again once the body is read, just before the handler writes anything to the pod (a
      // workspace write, a reload): a pause while the body arrived may have outlasted the hold.
      if (params.id !== undefined && service.servedElsewhere(params.id)) throw servedElsewhere(params.id);
      const result = await handler(input);
      if (name === "createSession" || name === "createAppSession") span?.setAttribute("k8s_runner.session_id", (result as { sessionId: string }).sessionId);
      span?.setAttribute("http.response.status_code", spec.status);
      return spec.status === 204 ? { status: 204 } : { status: spec.status, body: result };
    });
  };

  return (stream: ServerHttp2Stream, headers: IncomingHttpHeaders): void => {
    // A stream the api cancels mid-answer must not take the process down.
    stream.on("error", ignoreError);
    const method = String(headers[":method"] ?? "");
    const url = new URL(String(headers[":path"] ?? "/"), "http://supervisor");
    log.debug("internal request", { method, path: url.pathname });
    if (headers[PROTOCOL_HEADER] !== INTERNAL_PROTOCOL_VERSION) {
      const mismatch = `the supervisor speaks internal protocol ${INTERNAL_PROTOCOL_VERSION}`;
      return answer(stream, problemAnswer(new Problem("invalid", "internal_protocol_mismatch", mismatch)));
    }
    dispatch(stream, headers, method, url)
      .then((outcome) => outcome && answer(stream, outcome))
      .catch((error: unknown) => {
        if (error instanceof Problem) return answer(stream, problemAnswer(error));
        log.error("internal route failed", { path: url.pathname, error });
        if (!stream.headersSent) answer(stream, problemAnswer(new Problem("internal", "internal", "internal error")));
        else stream.destroy();
      });
  };
}
