import "./error-event.ts";
import type { IncomingMessage } from "node:http";
import type { Duplex } from "node:stream";
import type { Context, Handler } from "hono";
import type { WebSocket } from "ws";
import { INTERNAL_PREFIX, pathOf, queryOf, routes } from "../src/contract/routes.ts";
import { CloseCodes } from "../src/contract/streams.ts";
import { connectTerminal, relayTerminal } from "../src/internal/terminal-relay.ts";
import type { Splices } from "../src/internal/terminal-splice.ts";
import { type TerminalHandoff, handOverOrSplice } from "../src/internal/terminal-handoff.ts";
import { openTerminalUpgrade } from "../src/internal/terminal-upgrade.ts";
import { REQUEST_ID_HEADER, currentRequestId } from "../src/observability/request-context.ts";
import { type HandlerDeps, withOwner } from "./support.ts";

/** Where the runner's own server (src/api/upgrade.ts) takes an accepted terminal from. */
export const TERMINAL_UPGRADE = Symbol("terminal upgrade");
/** An upgrade as node's server hands it over: the request, its socket, and what followed its head. */
/** `handoff`: the channel to this pod's supervisor, on the runner's own server when it is open. */
export type RawUpgrade = { request: IncomingMessage; socket: Duplex; head: Buffer; key: string; splices: Splices; handoff?: TerminalHandoff | undefined };
export type TerminalStart = (upgrade: RawUpgrade) => void;
export type UpgradeEnv = { [TERMINAL_UPGRADE]?: TerminalStart | "pending" };

/** The client's handshake headers the supervisor answers: it speaks the WebSocket itself. */
const HANDSHAKE_HEADERS = ["sec-websocket-key", "sec-websocket-version", "sec-websocket-protocol", "sec-websocket-extensions"];

/**
 * The terminal of one accepted upgrade. The origin check is made here; everything else by the
 * supervisor the session's owner is, which speaks the client's WebSocket: on the runner's own
 * server the client's socket is spliced to it, on a host's the messages are relayed. Refusals
 * are close codes, because browsers cannot read an HTTP status on a failed upgrade
 * (docs/api.md). Nothing of the request's context is kept.
 */
function terminalStart(deps: HandlerDeps, c: Context): { splice: TerminalStart; relay: (ws: WebSocket) => void } {
  const sessionId = c.req.param("id") ?? "";
  const origin = c.req.header("origin");
  const query = new URL(c.req.url).searchParams;
  const passed = Object.fromEntries(routes.sessionIo.query.map((name) => [name, query.get(name) ?? undefined]));
  const path = pathOf(INTERNAL_PREFIX, routes.sessionIo, { id: sessionId }) + queryOf(routes.sessionIo, passed);
  const refused = deps.corsOrigins !== undefined && (origin === undefined || !deps.corsOrigins.includes(origin));
  // The upgrade completes after the request's middleware returned: its id is carried along.
  const requestId = currentRequestId();
  const idHeader: Record<string, string> = requestId === undefined ? {} : { [REQUEST_ID_HEADER]: requestId };
  return {
    splice: ({ request, socket, head, key, splices, handoff }) => {
      const headers: Record<string, string | undefined> = { ...idHeader };
      for (const name of HANDSHAKE_HEADERS) headers[name] = request.headers[name] as string | undefined;
      // A session between replicas is waited for, for a while, before the client is told to come back.
      const open = (clientGone: AbortSignal) => withOwner(deps, sessionId, "stream", (supervisor) => openTerminalUpgrade(supervisor.target, path, headers, clientGone), clientGone);
      if (refused) splices.refuse(socket, key, { code: CloseCodes.forbiddenOrigin, reason: "forbidden_origin" });
      else handOverOrSplice({ socket, key, head, splices, handoff, target: deps.supervisorFor(sessionId).target, path, headers, open });
    },
    relay: (ws) => {
      if (refused) return ws.close(CloseCodes.forbiddenOrigin, "forbidden_origin");
      relayTerminal(ws, (clientGone) => withOwner(deps, sessionId, "stream", (supervisor) => connectTerminal(supervisor.target, path, idHeader, clientGone), clientGone));
    },
  };
}

/**
 * GET /v1/sessions/:id/io (WebSocket). On the runner's own server the upgrade is taken by the
 * server once the routes' middleware allowed it; mounted in a host's Hono server, by the
 * host's @hono/node-ws helper.
 */
export const sessionIo = (deps: HandlerDeps): Handler => {
  const hosted = deps.upgradeWebSocket?.(
    (c: Context) => {
      const { relay } = terminalStart(deps, c);
      return { onOpen: (_event, ws) => relay(ws.raw as WebSocket) };
    },
    { onError: (error: unknown) => deps.log?.warn("terminal websocket handler failed", { error }) },
  );
  return async (c, next) => {
    const env = c.env as UpgradeEnv | undefined;
    if (env?.[TERMINAL_UPGRADE] === "pending") {
      env[TERMINAL_UPGRADE] = terminalStart(deps, c).splice;
      return c.body(null, 200);
    }
    if (hosted) return hosted(c, next);
    return c.json({ error: "upgrade_required", message: "the terminal is a WebSocket" }, 426, { upgrade: "websocket" });
  };
};
