import type { Handler } from "hono";
import { AppSessionBodySchema } from "../src/contract/requests.ts";
import { internalPaths } from "../src/internal/protocol.ts";
import { type HandlerDeps, acceptedTermsHeader, readBody, rejectBody, relay } from "./support.ts";

/** POST /v1/apps/:name/sessions: a session of an operator-predefined app. */
export const createAppSession = (deps: HandlerDeps): Handler => async (c) => {
  const body = await readBody(c, AppSessionBodySchema);
  if (!body.ok) return rejectBody(c, body);
  const acceptedTerms = c.req.header(acceptedTermsHeader);
  return relay(
    c,
    await deps.supervisor.call("POST", internalPaths.appSessions(c.req.param("name") ?? ""), {
      request: body.value,
      ...(acceptedTerms !== undefined && { acceptedTerms }),
    }),
  );
};
