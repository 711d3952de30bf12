import type { Handler } from "hono";
import { supervisorReady } from "./readiness.ts";
import type { HandlerDeps } from "./support.ts";

/** GET /v1/ready: readiness (the Deployment's probe); false while the supervisor is unreachable. */
export const ready = (deps: HandlerDeps): Handler => async (c) => {
  const answer = await supervisorReady(deps.supervisorFor());
  return c.json(answer, answer.ready ? 200 : 503);
};
