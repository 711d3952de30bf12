import type { Context, Handler } from "hono";
import { RunnerError } from "../src/contract/problem.ts";
import { paramNames, type RouteSpec, TERMS_HEADER, V1_PREFIX } from "../src/contract/routes.ts";
import { SpanKind, type Span, inSpan, remoteContext } from "../src/observability/tracing.ts";
import { type HandlerDeps, readBody, rejectBody, withOwner } from "./support.ts";

/**
 * A relayed route of the table: the body validated here with the route's schema, then the
 * supervisor's answer given with the route's status. A refusal by the supervisor arrives as
 * a RunnerError, which the routes' error handler relays unchanged.
 */
export const relayed = (deps: HandlerDeps, route: RouteSpec): Handler => {
  const relay = relayOf(deps, route);
  // Routes that change something (a start, a stop, a reload) are each a trace, continuing the
  // client's `traceparent` when it sent one (docs/tracing.md); reads are not, they are polled.
  if (route.method === "GET") return (c) => relay(c, undefined);
  const name = `${route.method} ${V1_PREFIX}${route.path}`;
  return (c) => {
    const attributes = { "http.request.method": route.method, "http.route": V1_PREFIX + route.path };
    return inSpan(name, { kind: SpanKind.SERVER, attributes, parent: remoteContext(c.req.raw.headers) }, async (span) => {
      try {
        const response = await relay(c, span);
        span.setAttribute("http.response.status_code", response.status);
        return response;
      } catch (error) {
        if (error instanceof RunnerError) span.setAttribute("http.response.status_code", error.status);
        throw error;
      }
    });
  };
};

function relayOf(deps: HandlerDeps, route: RouteSpec) {
  return async (c: Context, span: Span | undefined): Promise<Response> => {
    let body: unknown;
    if (route.body) {
      const parse = await readBody(c, route.body);
      if (!parse.ok) return rejectBody(c, parse);
      body = parse.value;
    }
    const params = Object.fromEntries(paramNames(route.path).map((name) => [name, c.req.param(name) ?? ""]));
    if (params.id !== undefined) span?.setAttribute("k8s_runner.session_id", params.id);
    const call = { params, query: Object.fromEntries((route.query ?? []).map((name) => [name, c.req.query(name)])), body, acceptedTerms: c.req.header(TERMS_HEADER) };
    const answer: unknown =
      params.id === undefined ? await deps.supervisorFor().call(route, call) : await withOwner(deps, params.id, "call", (supervisor) => supervisor.call(route, call), c.req.raw.signal);
    const sessionId = (answer as { sessionId?: unknown } | undefined)?.sessionId;
    if (typeof sessionId === "string") span?.setAttribute("k8s_runner.session_id", sessionId);
    if (route.status === 204) return c.body(null, 204);
    return c.json(answer as object, route.status);
  };
}
