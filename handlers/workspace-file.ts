import type { Handler } from "hono";
import { internalPaths } from "../src/internal/protocol.ts";
import { type HandlerDeps, relay } from "./support.ts";

/** GET /v1/sessions/:id/workspace/file?path=: one file of the live workspace (watch sessions). */
export const workspaceFile = (deps: HandlerDeps): Handler => async (c) => {
  const path = c.req.query("path");
  const query = path === undefined ? "" : `?${new URLSearchParams({ path })}`;
  return relay(c, await deps.supervisor.call("GET", `${internalPaths.workspaceFile(c.req.param("id") ?? "")}${query}`));
};
