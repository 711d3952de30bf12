/**
 * The terminal's WebSocket upgrade, taken on the supervisor's listeners beside HTTP/2
 * (internal-server.ts tells the two apart by a connection's first bytes; docs/relay.md "The
 * terminal"). The api makes the client's upgrade again on a connection of its own and splices
 * the two, so the WebSocket the client speaks is this one. Refusals the api must act on are
 * HTTP answers (`503 session_moving`: it asks the next owner; anything else: it closes the
 * client's terminal with 1011); refusals the client must see (an unknown session or app) are
 * close codes after the upgrade, as the contract has them.
 */
import type { IncomingMessage } from "node:http";
import { STATUS_CODES } from "node:http";
import type { Duplex } from "node:stream";
import { type WebSocket, WebSocketServer } from "ws";
import { Problem, problemAnswer } from "../contract/problem.ts";
import { INTERNAL_PREFIX, findRoute } from "../contract/routes.ts";
import { CloseCodes } from "../contract/streams.ts";
import type { Keepalive } from "../internal/keepalive.ts";
import { INTERNAL_PROTOCOL_VERSION, PEER_CREDENTIAL_HEADER, PROTOCOL_HEADER, parseCursor } from "../internal/protocol.ts";
import type { Logger } from "../log.ts";
import { REQUEST_ID_HEADER, requestIdFrom, withRequestId } from "../observability/request-context.ts";
import { tokenMatches } from "../observability/secret-compare.ts";
import { servedElsewhere } from "./problems.ts";
import type { SessionService } from "./session-service.ts";
import { terminalOpened } from "../metrics/figures.ts";
import type { TerminalHandoffs } from "./terminal-handoffs.ts";
import { streamTerminal } from "./terminal-stream.ts";

/** A client message over this closes the terminal with 1009 (docs/api.md). */
const MAX_CLIENT_MESSAGE_BYTES = 1024 * 1024;

type Upgrade = (request: IncomingMessage, socket: Duplex, head: Buffer) => void;

/** An HTTP answer on a connection that is not upgraded, and the connection's end. */
function answerPlain(socket: Duplex, status: number, body: unknown): void {
  const payload = Buffer.from(JSON.stringify(body), "utf8");
  const head = [`HTTP/1.1 ${status} ${STATUS_CODES[status] ?? ""}`, "content-type: application/json", `content-length: ${payload.byteLength}`, "connection: close", "", ""];
  socket.end(Buffer.concat([Buffer.from(head.join("\r\n"), "latin1"), payload]));
}

/**
 * A socket error ends the socket. Not a closure: it stays on the socket for the terminal's
 * life, and a closure made per upgrade would keep the upgrade's scope (its request) with it.
 */
function destroyOnError(this: Duplex): void {
  this.destroy();
}

/** A terminal's error listener (its close ends the follow); one function for all. */
function ignoreError(): void {}

export type TerminalUpgrades = {
  /**
   * The upgrade handler of one listener; `peer`: the peer listener's secret, which every upgrade
   * must present, and its keepalive (its terminals are pinged, see `pingPeerTerminals`).
   */
  handler(peer?: { secret: string; keepalive: Keepalive }): Upgrade;
  /** Cuts every spliced terminal (the api tells its clients the supervisor went away: 1011) and closes every handed one with 1012. */
  closeAll(): void;
};

export function terminalUpgrades(service: SessionService, log: Logger, handoffs?: TerminalHandoffs): TerminalUpgrades {
  // No extensions: the api passes frames on by their headers and does not decompress them.
  const wss = new WebSocketServer({ noServer: true, maxPayload: MAX_CLIENT_MESSAGE_BYTES, perMessageDeflate: false });
  // The terminals whose client sockets the api handed over: this process is all the client talks to.
  const handedTerminals = new WeakSet<WebSocket>();
  /** A refusal for the api: on its own connection, or with a socket it handed over, back to it. */
  const refuse = (socket: Duplex, head: Buffer, problem: Problem): void => {
    const { status, body } = problemAnswer(problem);
    if (handoffs?.refuse(socket, status, JSON.stringify(body), head)) return;
    answerPlain(socket, status, body);
  };

  const pinged = pingPeerTerminals();
  const upgrade = (request: IncomingMessage, socket: Duplex, head: Buffer, peer: { secret: string; keepalive: Keepalive } | undefined): void => {
    const secret = peer?.secret;
    socket.on("error", destroyOnError);
    if (secret !== undefined) {
      const offered = request.headers[PEER_CREDENTIAL_HEADER];
      if (!tokenMatches(typeof offered === "string" ? offered : undefined, secret)) {
        log.warn("peer refused: no valid credential", { remote: request.socket.remoteAddress });
        return answerPlain(socket, 401, { error: "unauthorized", message: "a peer must present the shared credential" });
      }
    }
    const url = new URL(request.url ?? "/", "http://supervisor");
    log.debug("internal request", { method: request.method, path: url.pathname });
    if (request.headers[PROTOCOL_HEADER] !== INTERNAL_PROTOCOL_VERSION) {
      return refuse(socket, head, new Problem("invalid", "internal_protocol_mismatch", `the supervisor speaks internal protocol ${INTERNAL_PROTOCOL_VERSION}`));
    }
    const found = request.method === "GET" ? findRoute(INTERNAL_PREFIX, "GET", url.pathname, ["terminal"]) : undefined;
    if (!found) return refuse(socket, head, new Problem("not_found", "no_such_internal_route", `${request.method} ${url.pathname}`));
    const id = found[1].id ?? "";
    // Not this replica's session now: the api asks again as the placement moves (docs/replicas.md).
    if (service.servedElsewhere(id)) return refuse(socket, head, servedElsewhere(id));
    wss.handleUpgrade(request, socket, head, (ws) => {
      if (peer) pinged.add(ws, peer.keepalive);
      const handed = handoffs?.isHanded(socket) ?? false;
      terminalOpened(handed ? "handed" : "spliced");
      if (handed) {
        handedTerminals.add(ws);
        handoffs!.taken(socket);
      }
      serveTerminal(service, id, url, ws);
    });
  };

  return {
    handler: (peer) => (request, socket, head) => withRequestId(requestIdFrom(request.headers[REQUEST_ID_HEADER]), () => upgrade(request, socket, head, peer)),
    closeAll: () => {
      // A spliced terminal is cut, and the api tells its client; a handed one is told here.
      for (const client of wss.clients) {
        if (handedTerminals.has(client)) client.close(CloseCodes.serviceRestart, "runner shutting down");
        else client.terminate();
      }
    },
  };
}

/**
 * Pings for the terminals of peer replicas' api processes (docs/relay.md "Keepalive"): over TCP
 * an api whose host vanished leaves the connection open for as long as the kernel retries, and
 * its terminal's follower with it. Each is pinged every interval; one whose pong (answered by
 * the client, through the api's splice) has not come back by the next is cut. The api watches
 * the pings arrive the same way (src/internal/terminal-splice.ts). One timer for them all,
 * running only while there are any.
 */
function pingPeerTerminals(): { add(ws: WebSocket, keepalive: Keepalive): void } {
  const answered = new Map<WebSocket, boolean>();
  let timer: NodeJS.Timeout | undefined;
  const round = () => {
    for (const [ws, pong] of answered) {
      if (!pong) {
        ws.terminate();
        continue;
      }
      answered.set(ws, false);
      ws.ping();
    }
  };
  return {
    add(ws, keepalive) {
      answered.set(ws, true);
      ws.on("pong", () => answered.set(ws, true));
      ws.once("close", () => {
        answered.delete(ws);
        if (answered.size > 0 || !timer) return;
        clearInterval(timer);
        timer = undefined;
      });
      timer ??= setInterval(round, keepalive.intervalMs);
      timer.unref();
    },
  };
}

/** One app's terminal, or the close code that says why there is none. */
function serveTerminal(service: SessionService, id: string, url: URL, ws: WebSocket): void {
  ws.on("error", ignoreError);
  const session = service.registry.get(id);
  if (!session) return ws.close(CloseCodes.notFound, "session not found");
  const appName = url.searchParams.get("app");
  const app = appName !== null ? session.apps.get(appName) : session.soleApp;
  if (!app) {
    const reason = appName !== null ? `session runs no app named '${appName}'` : `session runs ${session.apps.size} apps — ?app= is required`;
    return ws.close(CloseCodes.notFound, reason);
  }
  streamTerminal(session, app, ws, parseCursor(url.searchParams.get("lastSeq")) ?? 0, service.timings.resizeThrottleMs, () => service.ownership.holds(id));
}
