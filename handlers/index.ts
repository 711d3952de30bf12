/**
 * Composition of the `/v1` routes, mounted from the route table (src/contract/routes.ts).
 * `createRunnerRoutes` returns a Hono app that another Hono server can mount under any
 * prefix; `src/api/server.ts` serves it on its own.
 */
import { type Context, type ErrorHandler, type Handler, Hono, type NotFoundHandler } from "hono";
import { bodyLimit } from "hono/body-limit";
import { cors } from "hono/cors";
import { getConnInfo } from "@hono/node-server/conninfo";
import { createRateLimit, originGuard, tokenGuard } from "./access-guards.ts";
import { RunnerError } from "../src/contract/problem.ts";
import { type RouteName, type RouteSpec, V1_PREFIX, routes } from "../src/contract/routes.ts";
import { BODY_LIMIT_BYTES, bodyTooLarge, internalError, routeNotFound } from "../src/contract/validation.ts";
import { type SupervisorClient, SupervisorUnavailableError } from "../src/internal/client.ts";
import { type Logger, createLogger } from "../src/log.ts";
import { health } from "./health.ts";
import { openApi } from "./openapi.ts";
import { ready } from "./ready.ts";
import { relayed } from "./relay.ts";
import { sessionEvents } from "./session-events.ts";
import { sessionIo } from "./session-io.ts";
import type { HandlerDeps } from "./support.ts";

export type { HandlerDeps } from "./support.ts";

/**
 * What `createRunnerRoutes` takes: the handlers' dependencies, with either the one supervisor a
 * host talks to or the `supervisorFor` seam (docs/relay.md).
 */
export type RunnerRoutesOptions = Omit<HandlerDeps, "supervisorFor"> &
  ({ supervisor: SupervisorClient; supervisorFor?: never } | { supervisorFor: HandlerDeps["supervisorFor"]; supervisor?: never });

/** The framework-shaped JSON 404; a host app mounting the routes may use it as its own. */
export const notFound: NotFoundHandler = (c) => c.json(routeNotFound(c.req.method, new URL(c.req.url).pathname), 404);

/** The routes with handlers of their own; every other route of the table is relayed. */
const ownHandlers: Partial<Record<RouteName, (deps: HandlerDeps) => Handler>> = {
  health,
  openApi,
  ready,
  sessionEvents,
  sessionIo,
};

export function createRunnerRoutes(options: RunnerRoutesOptions): Hono {
  const app = new Hono();
  const log = options.log ?? createLogger("api", "info");
  const { supervisor, ...rest } = options;
  const deps: HandlerDeps = { ...rest, supervisorFor: options.supervisorFor ?? (() => supervisor!), log };
  const allowed = deps.corsOrigins;
  app.use(
    "*",
    cors({
      origin: allowed ? (origin) => (allowed.includes(origin) ? origin : null) : "*",
      allowMethods: ["GET", "POST", "PUT", "DELETE", "OPTIONS"],
    }),
  );
  app.use("*", originGuard(allowed));
  app.use("*", tokenGuard(deps.access?.apiToken));
  app.use("*", createRateLimit(deps.access?.createsPerMinute, clientAddress));
  // The rest of an oversized body is never read, so the connection cannot be reused.
  app.use("*", bodyLimit({ maxSize: BODY_LIMIT_BYTES, onError: (c) => c.json(bodyTooLarge, 413, { connection: "close" }) }));

  for (const [name, route] of Object.entries(routes) as [RouteName, RouteSpec][]) {
    if (route.kind === "internal") continue;
    app.on(route.method, V1_PREFIX + route.path, ownHandlers[name]?.(deps) ?? relayed(deps, route));
  }

  app.notFound(notFound);
  app.onError(answerFailure(log));
  return app;
}

/**
 * Every failure's answer: a supervisor's refusal relayed unchanged, an unreachable supervisor
 * as 503, anything else logged and answered 500. A host app mounting other routes may use it.
 */
export function answerFailure(log: Logger): ErrorHandler {
  return (error, c) => {
    // A 503 is a moment (a supervisor restarting, a session between replicas): say when to retry.
    const retry = { "retry-after": "1" };
    if (error instanceof RunnerError) {
      const headers = error.status === 503 ? retry : {};
      return error.body === undefined ? c.body(null, error.status as 500, headers) : c.json(error.body, error.status as 500, headers);
    }
    if (error instanceof SupervisorUnavailableError) {
      return c.json({ error: "supervisor_unavailable", message: `${error.message}; retry shortly` }, 503, retry);
    }
    // The error's own text may be a library's (response bodies, headers): logs only.
    log.error("request failed", { path: c.req.path, error });
    return c.json(internalError("internal error"), 500);
  };
}

/** The connection's peer address; a host app on another server than node's counts as one client. */
function clientAddress(c: Context): string {
  try {
    return getConnInfo(c).remote.address ?? "unknown";
  } catch {
    return "unknown";
  }
}
