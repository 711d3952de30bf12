/**
 * The supervisor's side of the internal protocol (docs/relay.md): HTTP/2 on a Unix socket
 * (mode 0600) that only the api process of the same pod can reach, and, when configured, on a
 * TCP address for the api processes of peer replicas, which must present the shared
 * credential on every stream. Each api process holds one connection; its calls, event streams
 * and terminals are streams of it (internal-dispatch.ts serves them).
 */
import { chmod } from "node:fs/promises";
import { type Http2Server, type Http2Session, type IncomingHttpHeaders, type ServerHttp2Stream, createServer } from "node:http2";
import type { Socket } from "node:net";
import type { PeerAddress } from "../config/peer.ts";
import { type Keepalive, PEER_KEEPALIVE, keepAlive } from "../internal/keepalive.ts";
import { tokenMatches } from "../observability/secret-compare.ts";
import { CONNECTION_WINDOW_BYTES, PEER_CREDENTIAL_HEADER, SESSION_MEMORY_MB, linkSettings } from "../internal/protocol.ts";
import type { Logger } from "../log.ts";
import { REQUEST_ID_HEADER, requestIdFrom, withRequestId } from "../observability/request-context.ts";
import { withRemoteContext } from "../observability/tracing.ts";
import { createDispatch } from "./internal-dispatch.ts";
import type { SessionService } from "./session-service.ts";

type StreamHandler = (stream: ServerHttp2Stream, headers: IncomingHttpHeaders) => void;

/** `keepalive`: the peer listener's; a Unix socket's client is this pod's api, whose death closes it. */
function http2Server(handle: StreamHandler, sessions: Set<Http2Session>, keepalive?: Keepalive): Http2Server {
  const server = createServer({ settings: linkSettings, maxSessionMemory: SESSION_MEMORY_MB });
  // No Nagle on TCP: an output frame must not wait for the previous segment's acknowledgement
  // (the raw socket, before HTTP/2 wraps it in a proxy that refuses such calls).
  if (keepalive) server.on("connection", (socket: Socket) => socket.setNoDelay(true));
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

function listenOn(server: Http2Server, where: string | PeerAddress): Promise<void> {
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
  server: Http2Server;
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
  log: Logger;
}): Promise<InternalServer> {
  const dispatch = createDispatch(options.service, options.log);
  const sessions = new Set<Http2Session>();
  const server = http2Server(dispatch, sessions);
  await listenOn(server, options.socketPath);
  await chmod(options.socketPath, 0o600);
  let peerServer: Http2Server | undefined;
  if (options.peer) {
    peerServer = http2Server(requireCredential(options.peer.secret, dispatch, options.log), sessions, options.peer.keepalive ?? PEER_KEEPALIVE);
    await listenOn(peerServer, options.peer.listen);
  }
  const address = peerServer?.address();
  return {
    server,
    peerPort: typeof address === "object" && address !== null ? address.port : undefined,
    close: async () => {
      const closed = [server, peerServer].map(
        (listener) => new Promise<void>((resolve) => (listener ? listener.close(() => resolve()) : resolve())),
      );
      // Open streams (terminals, event streams) are cut: the api tells its clients to come back.
      for (const session of sessions) session.destroy();
      await Promise.all(closed);
    },
  };
}
