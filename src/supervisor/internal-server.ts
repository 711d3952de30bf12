/**
 * The supervisor's side of the internal protocol (docs/relay.md): a Unix socket (mode 0600)
 * that only the api process of the same pod can reach, and, when configured, a TCP address for
 * the api processes of peer replicas, which must present the shared credential on every stream
 * and every upgrade. Each listener tells a connection's kind by its first bytes: the HTTP/2
 * preface is the api's one connection, whose calls and event streams are streams of it
 * (internal-dispatch.ts serves them); anything else is HTTP/1.1, where a terminal's WebSocket
 * upgrade is taken (terminal-upgrades.ts) and the connection becomes the client's terminal.
 */
import { chmod } from "node:fs/promises";
import { type Server as Http1Server, createServer as createHttp1Server } from "node:http";
import { type Http2Server, type Http2Session, type IncomingHttpHeaders, type ServerHttp2Stream, createServer } from "node:http2";
import { type Server as NetServer, type Socket, createServer as createNetServer } from "node:net";
import type { PeerAddress } from "../config/peer.ts";
import { handleChannelPossible, handoffSocketPath, serveHandleChannel } from "../internal/handle-channel.ts";
import { type Keepalive, PEER_KEEPALIVE, keepAlive } from "../internal/keepalive.ts";
import { claimSocketPath } from "../internal/socket-path.ts";
import { tokenMatches } from "../observability/secret-compare.ts";
import { CONNECTION_WINDOW_BYTES, PEER_CREDENTIAL_HEADER, SESSION_MEMORY_MB, linkSettings } from "../internal/protocol.ts";
import type { Logger } from "../log.ts";
import { REQUEST_ID_HEADER, requestIdFrom, withRequestId } from "../observability/request-context.ts";
import { withRemoteContext } from "../observability/tracing.ts";
import { createDispatch } from "./internal-dispatch.ts";
import type { SessionService } from "./session-service.ts";
import { TerminalHandoffs } from "./terminal-handoffs.ts";
import { type TerminalUpgrades, terminalUpgrades } from "./terminal-upgrades.ts";

type StreamHandler = (stream: ServerHttp2Stream, headers: IncomingHttpHeaders) => void;

/** `keepalive`: the peer listener's; a Unix socket's client is this pod's api, whose death closes it. */
function http2Server(handle: StreamHandler, sessions: Set<Http2Session>, keepalive?: Keepalive): Http2Server {
  const server = createServer({ settings: linkSettings, maxSessionMemory: SESSION_MEMORY_MB });
  server.on("session", (session: Http2Session) => {
    if (keepalive) keepAlive(session, keepalive);
    sessions.add(session);
    session.once("close", () => sessions.delete(session));
    session.on("error", () => undefined);
    // A connection its client gave up on may already be gone; setting a window on it would throw.
    if (!session.destroyed) session.setLocalWindowSize(CONNECTION_WINDOW_BYTES);
  });
  // Each stream is served under the api's request id, so the lines it causes name it, and under
  // the trace context it carried (`traceparent`), so the spans it causes join the api's trace.
  server.on("stream", (stream, headers) => withRequestId(requestIdFrom(headers[REQUEST_ID_HEADER]), () => withRemoteContext(headers, () => handle(stream, headers))));
  return server;
}

/** Refuses a stream without the shared credential (401) and ends its connection. */
function requireCredential(secret: string, handle: StreamHandler, log: Logger): StreamHandler {
  return (stream, headers) => {
    const offered = headers[PEER_CREDENTIAL_HEADER];
    if (tokenMatches(typeof offered === "string" ? offered : undefined, secret)) return handle(stream, headers);
    log.warn("peer refused: no valid credential", { remote: stream.session?.socket?.remoteAddress });
    stream.on("error", () => undefined);
    stream.respond({ ":status": 401, "content-type": "application/json" });
    stream.end(JSON.stringify({ error: "unauthorized", message: "a peer must present the shared credential" }));
    stream.session?.close();
  };
}

/** The first bytes of the HTTP/2 preface: no HTTP/1.1 method starts so. */
const HTTP2_START = Buffer.from("PRI");

/**
 * A listener that hands each connection to HTTP/2 or to HTTP/1.1 by its first bytes. `tcp`: no
 * Nagle (an output frame must not wait for the previous segment's acknowledgement) and TCP
 * keepalive (beside the pings of a spliced terminal, terminal-upgrades.ts).
 */
function sniffingListener(http2: Http2Server, http1: Http1Server, tcp: Keepalive | undefined, open: Set<Socket>): NetServer {
  return createNetServer((socket: Socket) => {
    // Every connection, whatever it became: closing the listener waits for them all.
    open.add(socket);
    socket.once("close", () => open.delete(socket));
    if (tcp) {
      socket.setNoDelay(true);
      socket.setKeepAlive(true, tcp.intervalMs);
    }
    let seen: Buffer = Buffer.alloc(0);
    const sniff = (chunk: Buffer) => {
      seen = seen.byteLength === 0 ? chunk : Buffer.concat([seen, chunk]);
      const compared = Math.min(seen.byteLength, HTTP2_START.byteLength);
      const http2Preface = seen.subarray(0, compared).equals(HTTP2_START.subarray(0, compared));
      if (http2Preface && seen.byteLength < HTTP2_START.byteLength) return;
      socket.off("data", sniff);
      socket.off("error", forget);
      socket.pause();
      // Read again by the server it goes to, from the first byte.
      socket.unshift(seen);
      if (http2Preface) http2.emit("connection", socket);
      else {
        http1.emit("connection", socket);
        socket.resume();
      }
    };
    const forget = () => socket.destroy();
    socket.on("data", sniff);
    socket.on("error", forget);
  });
}

/** The HTTP/1.1 side of a listener: terminal upgrades only. */
function upgradeServer(upgrades: TerminalUpgrades, peer?: { secret: string; keepalive: Keepalive }): Http1Server {
  const server = createHttp1Server((_request, response) => {
    response.writeHead(426, { "content-type": "application/json", connection: "close" });
    response.end(JSON.stringify({ error: "upgrade_required", message: "only a terminal's WebSocket upgrade is served over HTTP/1.1" }));
  });
  server.on("upgrade", upgrades.handler(peer));
  return server;
}

function listenOn(server: NetServer, where: string | PeerAddress): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    const done = () => {
      server.off("error", reject);
      resolve();
    };
    if (typeof where === "string") server.listen(where, done);
    else server.listen(where.port, where.host, done);
  });
}

export type InternalServer = {
  server: NetServer;
  /** The peer listener's port when one was asked for (port 0 picks a free one). */
  peerPort: number | undefined;
  close(): Promise<void>;
};

export async function startInternalServer(options: {
  /** Free to listen on (src/internal/socket-path.ts claimed it). */
  socketPath: string;
  /** Peers' api processes, over TCP, with the shared credential (docs/relay.md). */
  peer?: { listen: PeerAddress; secret: string; keepalive?: Keepalive } | undefined;
  service: SessionService;
  /** Take terminals' client sockets from the api beside it (docs/relay.md "The handoff"), when this process can open the channel. */
  handoff: boolean;
  log: Logger;
}): Promise<InternalServer> {
  const dispatch = createDispatch(options.service, options.log);
  const sessions = new Set<Http2Session>();
  const handoffs = new TerminalHandoffs(options.log);
  const upgrades = terminalUpgrades(options.service, options.log, handoffs);
  const sockets = new Set<Socket>();
  const local = upgradeServer(upgrades);
  handoffs.readFrom(local);
  const server = sniffingListener(http2Server(dispatch, sessions), local, undefined, sockets);
  await listenOn(server, options.socketPath);
  await chmod(options.socketPath, 0o600);
  const handoffPath = handoffSocketPath(options.socketPath);
  // A handoff socket left by a supervisor that died is taken over; a live one (another runner's) is not.
  const channel = options.handoff && handleChannelPossible()
    ? await claimSocketPath(handoffPath)
        .then(() => serveHandleChannel(handoffPath, (message, handle, reply) => handoffs.receive(message, handle, reply), options.log))
        .catch((error: unknown) => {
          options.log.warn("terminal handoff off: its socket could not be served", { path: handoffPath, error });
          return undefined;
        })
    : undefined;
  let peerServer: NetServer | undefined;
  if (options.peer) {
    const { secret, listen } = options.peer;
    const keepalive = options.peer.keepalive ?? PEER_KEEPALIVE;
    peerServer = sniffingListener(http2Server(requireCredential(secret, dispatch, options.log), sessions, keepalive), upgradeServer(upgrades, { secret, keepalive }), keepalive, sockets);
    await listenOn(peerServer, listen);
  }
  const address = peerServer?.address();
  return {
    server,
    peerPort: typeof address === "object" && address !== null ? address.port : undefined,
    close: async () => {
      const closed = [server, peerServer].map(
        (listener) => new Promise<void>((resolve) => (listener ? listener.close(() => resolve()) : resolve())),
      );
      // Open streams and terminals are cut: the api tells its clients to come back.
      for (const session of sessions) session.destroy();
      upgrades.closeAll();
      for (const socket of sockets) socket.destroy();
      channel?.close();
      await Promise.all(closed);
    },
  };
}
