import type { Handler } from "hono";
import { WorkspaceChangeSetBodySchema } from "../src/contract/requests.ts";
import { internalPaths } from "../src/internal/protocol.ts";
import { type HandlerDeps, readBody, rejectBody, relay } from "./support.ts";

/** POST /v1/sessions/:id/workspace: apply a change set to the live workspace (watch sessions). */
export const workspaceApply = (deps: HandlerDeps): Handler => async (c) => {
  const body = await readBody(c, WorkspaceChangeSetBodySchema);
  if (!body.ok) return rejectBody(c, body);
  return relay(c, await deps.supervisor.call("POST", internalPaths.workspace(c.req.param("id") ?? ""), body.value));
};
