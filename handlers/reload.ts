import type { Handler } from "hono";
import { internalPaths } from "../src/internal/protocol.ts";
import { type HandlerDeps, relay } from "./support.ts";

/** POST /v1/sessions/:id/reload[?app=]: re-run app(s) without a change (watch sessions). */
export const reload = (deps: HandlerDeps): Handler => async (c) => {
  const app = c.req.query("app");
  const query = app === undefined ? "" : `?${new URLSearchParams({ app })}`;
  return relay(c, await deps.supervisor.call("POST", `${internalPaths.reload(c.req.param("id") ?? "")}${query}`));
};
