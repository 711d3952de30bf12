import "./error-event.ts";
import type { Context, Handler } from "hono";
import type { WebSocket } from "ws";
import { CloseCodes } from "../src/contract/streams.ts";
import { relayTerminal } from "../src/internal/terminal-relay.ts";
import { currentRequestId, withRequestId } from "../src/observability/request-context.ts";
import { type HandlerDeps, withOwner } from "./support.ts";

/** Where the runner's own server (src/api/upgrade.ts) takes an accepted terminal from. */
export const TERMINAL_UPGRADE = Symbol("terminal upgrade");
export type TerminalStart = (ws: WebSocket) => void;
export type UpgradeEnv = { [TERMINAL_UPGRADE]?: TerminalStart | "pending" };

/**
 * The terminal of one accepted upgrade: checks run after the upgrade and answer with close
 * codes, because browsers cannot read an HTTP status on a failed upgrade (docs/api.md). The
 * origin check is made here; everything else by the supervisor, whose frames are relayed
 * without being interpreted. Nothing of the request's context is kept.
 */
function terminalStart(deps: HandlerDeps, c: Context): TerminalStart {
  const sessionId = c.req.param("id") ?? "";
  const origin = c.req.header("origin");
  const query = new URL(c.req.url).searchParams;
  const corsOrigins = deps.corsOrigins;
  // The upgrade completes after the request's middleware returned: its id is carried along.
  const requestId = currentRequestId();
  // A session between replicas is waited for, for a while, before the client is told to come back.
  const open = (clientGone: AbortSignal) => withOwner(deps, sessionId, "stream", (supervisor) => supervisor.openTerminal(sessionId, query), clientGone);
  return (ws) => {
    if (corsOrigins && (origin === undefined || !corsOrigins.includes(origin))) {
      ws.close(CloseCodes.forbiddenOrigin, "forbidden_origin");
      return;
    }
    relayTerminal(ws, requestId === undefined ? open : (clientGone) => withRequestId(requestId, () => open(clientGone)));
  };
}

/**
 * GET /v1/sessions/:id/io (WebSocket). On the runner's own server the upgrade is made by the
 * server once the routes' middleware allowed it; mounted in a host's Hono server, by the
 * host's @hono/node-ws helper.
 */
export const sessionIo = (deps: HandlerDeps): Handler => {
  const hosted = deps.upgradeWebSocket?.(
    (c: Context) => {
      const start = terminalStart(deps, c);
      return { onOpen: (_event, ws) => start(ws.raw as WebSocket) };
    },
    { onError: (error: unknown) => deps.log?.warn("terminal websocket handler failed", { error }) },
  );
  return async (c, next) => {
    const env = c.env as UpgradeEnv | undefined;
    if (env?.[TERMINAL_UPGRADE] === "pending") {
      env[TERMINAL_UPGRADE] = terminalStart(deps, c);
      return c.body(null, 200);
    }
    if (hosted) return hosted(c, next);
    return c.json({ error: "upgrade_required", message: "the terminal is a WebSocket" }, 426, { upgrade: "websocket" });
  };
};
