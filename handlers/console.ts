import { Hono } from "hono";
import { CONSOLE_ASSETS, CONSOLE_PAGE, assetBytes } from "../src/console/assets.ts";
import { routes } from "../src/contract/routes.ts";
import { createLogger } from "../src/log.ts";
import { answerFailure } from "./index.ts";
import type { HandlerDeps } from "./support.ts";

/**
 * The session console (docs/clients.md "Session console"), mounted only with RUNNER_CONSOLE=true:
 * the page and its assets, and the session list the page (and `k8s-runner sessions`) reads.
 * Everything else the page does goes through the public `/v1` routes.
 */
export function createConsoleRoutes(deps: Pick<HandlerDeps, "supervisorFor" | "log">): Hono {
  const app = new Hono();
  app.onError(answerFailure(deps.log ?? createLogger("api", "info")));
  const page = async () =>
    new Response(new Uint8Array(await assetBytes(CONSOLE_PAGE)), {
      headers: { "content-type": CONSOLE_PAGE.contentType, "cache-control": "no-cache" },
    });
  app.get("/console", page);
  app.get("/console/", page);
  app.get("/console/assets/:file", async (c) => {
    const asset = CONSOLE_ASSETS[c.req.param("file")];
    if (!asset) return c.notFound();
    return c.body(new Uint8Array(await assetBytes(asset)), 200, { "content-type": asset.contentType, "cache-control": "no-cache" });
  });
  app.get("/console/api/sessions", async (c) => c.json(await deps.supervisorFor().call(routes.listSessions)));
  return app;
}
