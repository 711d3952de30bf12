import type { Handler } from "hono";
import { internalPaths } from "../src/internal/protocol.ts";
import { type HandlerDeps, relay } from "./support.ts";

/** GET /v1/sessions/:id: the session document. */
export const getSession = (deps: HandlerDeps): Handler => async (c) =>
  relay(c, await deps.supervisor.call("GET", internalPaths.session(c.req.param("id") ?? "")));
