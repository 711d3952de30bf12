import type { Handler } from "hono";
import { internalPaths } from "../src/internal/protocol.ts";
import { type HandlerDeps, relay } from "./support.ts";

/** GET /v1/sessions/:id/workspace: the live workspace's content-hash tree (watch sessions). */
export const workspaceTree = (deps: HandlerDeps): Handler => async (c) =>
  relay(c, await deps.supervisor.call("GET", internalPaths.workspace(c.req.param("id") ?? "")));
