import type { Handler } from "hono";
import { SetAppsBodySchema } from "../src/contract/requests.ts";
import { internalPaths } from "../src/internal/protocol.ts";
import { type HandlerDeps, readBody, rejectBody, relay } from "./support.ts";

/** PUT /v1/sessions/:id/apps: replace the app set (watch sessions). */
export const setApps = (deps: HandlerDeps): Handler => async (c) => {
  const body = await readBody(c, SetAppsBodySchema);
  if (!body.ok) return rejectBody(c, body);
  return relay(c, await deps.supervisor.call("PUT", internalPaths.apps(c.req.param("id") ?? ""), body.value));
};
