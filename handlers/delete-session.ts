import type { Handler } from "hono";
import { internalPaths } from "../src/internal/protocol.ts";
import { type HandlerDeps, relay } from "./support.ts";

/** DELETE /v1/sessions/:id: stop; idempotent (unknown ids are 204). */
export const deleteSession = (deps: HandlerDeps): Handler => async (c) =>
  relay(c, await deps.supervisor.call("DELETE", internalPaths.session(c.req.param("id") ?? "")));
