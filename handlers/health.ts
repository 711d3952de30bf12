import type { Handler } from "hono";
import type { HandlerDeps } from "./support.ts";

/** GET /v1/health: the api process answers itself; it is alive whatever the supervisor does. */
export const health = (deps: HandlerDeps): Handler => (c) => c.json({ ok: true, version: deps.version });
