/**
 * Composition of the `/v1` routes. `createRunnerRoutes` returns a Hono app that another Hono
 * server can mount under any prefix; `src/api/server.ts` serves it on its own.
 */
import { type Context, Hono, type NotFoundHandler } from "hono";
import { bodyLimit } from "hono/body-limit";
import { cors } from "hono/cors";
import { getConnInfo } from "@hono/node-server/conninfo";
import { createRateLimit, originGuard, tokenGuard } from "../src/api/access.ts";
import { BODY_LIMIT_BYTES, bodyTooLarge, internalError, routeNotFound } from "../src/contract/validation.ts";
import { SupervisorUnavailableError } from "../src/internal/client.ts";
import { createLogger } from "../src/log.ts";
import { capabilities } from "./capabilities.ts";
import { createAppSession } from "./create-app-session.ts";
import { createSession } from "./create-session.ts";
import { deleteSession } from "./delete-session.ts";
import { getSession } from "./get-session.ts";
import { health } from "./health.ts";
import { probe } from "./probe.ts";
import { ready } from "./ready.ts";
import { reload } from "./reload.ts";
import { resume } from "./resume.ts";
import { sessionEvents } from "./session-events.ts";
import { sessionIo } from "./session-io.ts";
import { setApps } from "./set-apps.ts";
import type { HandlerDeps } from "./support.ts";
import { workspaceApply } from "./workspace-apply.ts";
import { workspaceFile } from "./workspace-file.ts";
import { workspaceTree } from "./workspace-tree.ts";

export type { HandlerDeps } from "./support.ts";

/** The framework-shaped JSON 404; a host app mounting the routes may use it as its own. */
export const notFound: NotFoundHandler = (c) => c.json(routeNotFound(c.req.method, new URL(c.req.url).pathname), 404);

export function createRunnerRoutes(deps: HandlerDeps): Hono {
  const app = new Hono();
  const allowed = deps.corsOrigins;
  const log = deps.log ?? createLogger("api", "info");
  deps = { ...deps, log };
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

  app.get("/v1/health", health(deps));
  app.get("/v1/ready", ready(deps));
  app.get("/v1/capabilities", capabilities(deps));
  app.post("/v1/probe", probe(deps));
  app.post("/v1/sessions", createSession(deps));
  app.post("/v1/apps/:name/sessions", createAppSession(deps));
  app.get("/v1/sessions/:id", getSession(deps));
  app.delete("/v1/sessions/:id", deleteSession(deps));
  app.get("/v1/sessions/:id/events", sessionEvents(deps));
  app.get("/v1/sessions/:id/io", sessionIo(deps));
  app.get("/v1/sessions/:id/workspace", workspaceTree(deps));
  app.post("/v1/sessions/:id/workspace", workspaceApply(deps));
  app.get("/v1/sessions/:id/workspace/file", workspaceFile(deps));
  app.post("/v1/sessions/:id/reload", reload(deps));
  app.put("/v1/sessions/:id/apps", setApps(deps));
  app.post("/v1/sessions/:id/resume", resume(deps));

  app.notFound(notFound);
  app.onError((error, c) => {
    if (error instanceof SupervisorUnavailableError) {
      return c.json({ error: "supervisor_unavailable", message: `${error.message}; retry shortly` }, 503);
    }
    // The error's own text may be a library's (response bodies, headers): logs only.
    log.error("request failed", { path: c.req.path, error });
    return c.json(internalError("internal error"), 500);
  });
  return app;
}

/** The connection's peer address; a host app on another server than node's counts as one client. */
function clientAddress(c: Context): string {
  try {
    return getConnInfo(c).remote.address ?? "unknown";
  } catch {
    return "unknown";
  }
}
