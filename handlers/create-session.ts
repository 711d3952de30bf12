import type { Handler } from "hono";
import { CreateSessionBodySchema } from "../src/contract/requests.ts";
import { internalPaths } from "../src/internal/protocol.ts";
import { type HandlerDeps, acceptedTermsHeader, readBody, rejectBody, relay } from "./support.ts";

/** POST /v1/sessions: schema here; terms, admission and the start in the supervisor. */
export const createSession = (deps: HandlerDeps): Handler => async (c) => {
  const body = await readBody(c, CreateSessionBodySchema);
  if (!body.ok) return rejectBody(c, body);
  const acceptedTerms = c.req.header(acceptedTermsHeader);
  return relay(
    c,
    await deps.supervisor.call("POST", internalPaths.sessions, {
      request: body.value,
      ...(acceptedTerms !== undefined && { acceptedTerms }),
    }),
  );
};
