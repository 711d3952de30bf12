/** What a session pod records of its session, shared by the run and watch modes. */
import type { StartSpec } from "../../sessions/backend-seam.ts";
import type { SessionRecord } from "../specs/session-record.ts";

/** The session's facts as its pod records them. */
export function sessionFacts(spec: StartSpec): Omit<SessionRecord, "envNames" | "agent"> {
  return {
    sessionId: spec.sessionId,
    mode: spec.mode,
    createdAt: spec.createdAt,
    apps: spec.apps,
    inspect: spec.inspect,
    selfContained: spec.selfContained,
    config: spec.config,
  };
}
