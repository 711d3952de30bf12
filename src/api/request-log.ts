/**
 * The api process's request middleware: gives the request its id (the caller's
 * `x-request-id` when acceptable), serves it under that id so the supervisor and every log
 * line see it, echoes it on the answer, and writes one line per request. The line names the
 * path only: a query string or header may hold a token.
 */
import type { MiddlewareHandler } from "hono";
import type { Logger } from "../log.ts";
import { REQUEST_ID_HEADER, requestIdFrom, withRequestId } from "../observability/request-context.ts";

/** Polled by probes and scrapers every few seconds: logged only at debug. */
const QUIET_PATHS = new Set(["/v1/health", "/metrics"]);

export function requestLog(log: Logger, now: () => number = performance.now.bind(performance)): MiddlewareHandler {
  return async (c, next) => {
    const id = requestIdFrom(c.req.header(REQUEST_ID_HEADER));
    const began = now();
    const path = new URL(c.req.url).pathname;
    await withRequestId(id, async () => {
      c.header(REQUEST_ID_HEADER, id);
      await next();
      const fields = { method: c.req.method, path, status: c.res.status, ms: Math.round(now() - began) };
      if (QUIET_PATHS.has(path)) log.debug("request", fields);
      else log.info("request", fields);
    });
  };
}
