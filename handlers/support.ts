/**
 * What every handler shares: its dependencies and reading a JSON body with the
 * framework-level answers clients expect (docs/api.md "Error bodies").
 */
import type { Context } from "hono";
import type { UpgradeWebSocket } from "hono/ws";
import type * as v from "valibot";
import type { AccessConfig } from "../src/config/access.ts";
import { MAX_JSON_DEPTH, jsonDeeperThan } from "../src/contract/json-depth.ts";
import {
  type BodyParse,
  emptyJsonBody,
  invalidJsonBody,
  parseBody,
  unsupportedMediaType,
  validationFailure,
} from "../src/contract/validation.ts";
import type { MoveWait } from "../src/internal/session-router.ts";
import type { SupervisorClient } from "../src/internal/client.ts";
import type { Logger } from "../src/log.ts";

export type HandlerDeps = {
  /**
   * The supervisor that holds a session (or, with no id, the one to ask about no session in
   * particular): the local one, or among replicas the owner's, reached over the peer link.
   */
  supervisorFor(sessionId?: string): SupervisorClient;
  /**
   * Several replicas (src/api/session-router.ts `routed`): `attempt` against the supervisor that
   * serves the session and, while the session is between owners, again until it has one, for a
   * bounded time. Absent: `attempt(supervisorFor(sessionId))`, once.
   */
  routeSession?<T>(sessionId: string, wait: MoveWait, attempt: (supervisor: SupervisorClient) => Promise<T>, signal?: AbortSignal): Promise<T>;
  /** Allowed origins; undefined = any (`*`). */
  corsOrigins: string[] | undefined;
  version: string;
  /**
   * A host's WebSocket helper (@hono/node-ws) when the routes are mounted in another Hono
   * server; the runner's own server upgrades terminals itself (src/api/upgrade.ts).
   */
  upgradeWebSocket?: UpgradeWebSocket | undefined;
  /** Access control (token, rate limit); absent = none, as the contract has it. */
  access?: AccessConfig | undefined;
  /** Where unexpected errors are logged; absent = a JSON logger on stderr. */
  log?: Logger | undefined;
};

/** `attempt` against the session's supervisor, waiting out a move between replicas where the host routes sessions (HandlerDeps.routeSession). */
export function withOwner<T>(deps: HandlerDeps, sessionId: string, wait: MoveWait, attempt: (supervisor: SupervisorClient) => Promise<T>, signal?: AbortSignal): Promise<T> {
  return deps.routeSession ? deps.routeSession(sessionId, wait, attempt, signal) : attempt(deps.supervisorFor(sessionId));
}

/** Reads and validates a JSON body; a missing body is validated as `undefined`. */
export async function readBody<S extends v.GenericSchema>(c: Context, schema: S): Promise<BodyParse<v.InferOutput<S>>> {
  const text = await c.req.text();
  const contentType = c.req.header("content-type");
  let input: unknown;
  if (contentType !== undefined && !/^application\/([\w.+-]+\+)?json\b/i.test(contentType)) {
    if (text !== "") return { ok: false, body: unsupportedMediaType(contentType) };
  } else if (contentType !== undefined) {
    if (text.trim() === "") return { ok: false, body: emptyJsonBody };
    try {
      input = JSON.parse(text);
    } catch {
      return { ok: false, body: invalidJsonBody };
    }
    if (jsonDeeperThan(input, MAX_JSON_DEPTH)) return { ok: false, body: validationFailure(`body must NOT be nested more than ${MAX_JSON_DEPTH} levels deep`) };
  } else if (text !== "") {
    return { ok: false, body: unsupportedMediaType("undefined") };
  }
  return parseBody(schema, input);
}

export function rejectBody(c: Context, parse: { ok: false; body: { statusCode: number } }): Response {
  return c.json(parse.body, parse.body.statusCode as 400);
}

