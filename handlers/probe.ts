import type { Handler } from "hono";
import { ProbeBodySchema } from "../src/contract/requests.ts";
import { internalPaths } from "../src/internal/protocol.ts";
import { type HandlerDeps, readBody, rejectBody, relay } from "./support.ts";

/** POST /v1/probe: the backend's availability report, always 200 once the body is valid. */
export const probe = (deps: HandlerDeps): Handler => async (c) => {
  const body = await readBody(c, ProbeBodySchema);
  if (!body.ok) return rejectBody(c, body);
  return relay(c, await deps.supervisor.call("POST", internalPaths.probe, body.value));
};
