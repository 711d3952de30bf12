/**
 * Access control of the `/v1` routes (docs/operating.md "Security"), all off unless configured:
 * - the Origin allowlist (RUNNER_CORS_ORIGINS) also refuses plain HTTP requests from a browser
 *   page of another origin (`403 origin_not_allowed`), not only their CORS headers;
 * - a bearer token (RUNNER_API_TOKEN), compared in constant time; browsers cannot set headers on
 *   an EventSource or a WebSocket, so those two may carry it as `?access_token=` instead;
 * - a per-client limit on session creation (RUNNER_CREATE_RATE_LIMIT per minute), `429` with
 *   `retry-after`. The client is the connection's address: behind a proxy every client shares
 *   the proxy's, which docs/operating.md says.
 * No answer or log line ever contains the token.
 */
import type { Context, MiddlewareHandler } from "hono";
import { accessPattern } from "../src/contract/routes.ts";
import { tokenMatches } from "../src/observability/secret-compare.ts";
import { SlidingWindowLimit } from "./rate-limit.ts";

/** The route table's access classes (`AccessClass`), as paths. */
const OPEN_PATHS = accessPattern("open");
const STREAM_PATHS = accessPattern("stream");
const CREATE_PATHS = accessPattern("creates");
const MINUTE_MS = 60_000;

export function originGuard(allowed: string[] | undefined): MiddlewareHandler {
  return async (c, next) => {
    const origin = c.req.header("origin");
    // No Origin: not a browser page (curl, a server). The WebSocket route answers with 4403 itself.
    if (!allowed || origin === undefined || allowed.includes(origin) || c.req.header("upgrade")?.toLowerCase() === "websocket") return next();
    return c.json({ error: "origin_not_allowed", message: "this origin is not allowed to use the runner" }, 403);
  };
}

function offeredToken(c: Context): string | undefined {
  const header = c.req.header("authorization");
  const bearer = header !== undefined ? /^Bearer\s+(\S+)\s*$/i.exec(header)?.[1] : undefined;
  if (bearer !== undefined) return bearer;
  return STREAM_PATHS.test(c.req.path) ? c.req.query("access_token") : undefined;
}

export function tokenGuard(token: string | undefined): MiddlewareHandler {
  return async (c, next) => {
    if (token === undefined || c.req.method === "OPTIONS" || OPEN_PATHS.test(c.req.path)) return next();
    if (tokenMatches(offeredToken(c), token)) return next();
    return c.json({ error: "unauthorized", message: "a valid bearer token is required" }, 401, { "www-authenticate": 'Bearer realm="k8s-runner"' });
  };
}

export function createRateLimit(perMinute: number | undefined, clientOf: (c: Context) => string, now: () => number = Date.now): MiddlewareHandler {
  const limit = perMinute === undefined ? undefined : new SlidingWindowLimit(perMinute, MINUTE_MS);
  return async (c, next) => {
    if (!limit || c.req.method !== "POST" || !CREATE_PATHS.test(c.req.path)) return next();
    const decision = limit.take(clientOf(c), now());
    if (decision.allowed) return next();
    return c.json(
      { error: "rate_limited", message: `at most ${perMinute} sessions per minute from one client; retry in ${decision.retryAfterSeconds} s` },
      429,
      { "retry-after": String(decision.retryAfterSeconds) },
    );
  };
}
