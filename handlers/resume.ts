import type { Handler } from "hono";
import { internalPaths } from "../src/internal/protocol.ts";
import { type HandlerDeps, relay } from "./support.ts";

/** POST /v1/sessions/:id/resume: bring a suspended watch session back under the same id. */
export const resume = (deps: HandlerDeps): Handler => async (c) =>
  relay(c, await deps.supervisor.call("POST", internalPaths.resume(c.req.param("id") ?? "")));
