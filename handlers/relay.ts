import type { Context, Handler } from "hono";
import { paramNames, type RouteSpec, TERMS_HEADER } from "../src/contract/routes.ts";
import { type HandlerDeps, readBody, rejectBody, withOwner } from "./support.ts";

/**
 * A relayed route of the table: the body validated here with the route's schema, then the
 * supervisor's answer given with the route's status. A refusal by the supervisor arrives as
 * a RunnerError, which the routes' error handler relays unchanged.
 */
export const relayed = (deps: HandlerDeps, route: RouteSpec): Handler => async (c: Context) => {
  let body: unknown;
  if (route.body) {
    const parse = await readBody(c, route.body);
    if (!parse.ok) return rejectBody(c, parse);
    body = parse.value;
  }
  const params = Object.fromEntries(paramNames(route.path).map((name) => [name, c.req.param(name) ?? ""]));
  const call = { params, query: Object.fromEntries((route.query ?? []).map((name) => [name, c.req.query(name)])), body, acceptedTerms: c.req.header(TERMS_HEADER) };
  const answer: unknown =
    params.id === undefined ? await deps.supervisorFor().call(route, call) : await withOwner(deps, params.id, "call", (supervisor) => supervisor.call(route, call), c.req.raw.signal);
  if (route.status === 204) return c.body(null, 204);
  return c.json(answer as object, route.status);
};
