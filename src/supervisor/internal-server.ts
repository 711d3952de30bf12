/**
 * The supervisor's side of the internal socket: HTTP/1.1 on a Unix socket (mode 0600) that
 * only the api process of the same pod can reach. It serves the route table under
 * `/internal`: each relayed route's body is validated with the route's schema, its answer is
 * the route's success status, and a Problem (raised by the core, or here for a message no route
 * takes) becomes its error answer here.
 */
import { chmod } from "node:fs/promises";
import { type IncomingMessage, type Server, type ServerResponse, createServer } from "node:http";
import type { Duplex } from "node:stream";
import * as v from "valibot";
import { Problem, problemAnswer } from "../contract/problem.ts";
import { INTERNAL_PREFIX, type RouteSpec, TERMS_HEADER, findRoute, matchPath, routes } from "../contract/routes.ts";
import { CloseCodes } from "../contract/streams.ts";
import { EVENTS_AFTER_QUERY, INTERNAL_PROTOCOL_VERSION, IO_UPGRADE_PROTOCOL, PROTOCOL_HEADER, parseCursor } from "../internal/protocol.ts";
import type { Logger } from "../log.ts";
import { REQUEST_ID_HEADER, requestIdFrom, withRequestId } from "../observability/request-context.ts";
import { streamEvents } from "./event-stream.ts";
import { type RouteInputs, implementations } from "./route-implementations.ts";
import type { SessionService } from "./session-service.ts";
import { refuseTerminal, streamTerminal } from "./terminal-stream.ts";

const MAX_MESSAGE_BYTES = 8 * 1024 * 1024;

/** A message the api process should never send: a bug or a mismatched build, answered with 400. */
const badMessage = (message: string) => new Problem("invalid", "bad_internal_message", message);

type Answer = { status: number; body?: unknown };

function readJson(request: IncomingMessage): Promise<unknown> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    request.on("data", (chunk: Buffer) => {
      size += chunk.byteLength;
      if (size > MAX_MESSAGE_BYTES) {
        reject(badMessage("internal message too large"));
        request.destroy();
        return;
      }
      chunks.push(chunk);
    });
    request.on("end", () => {
      try {
        resolve(chunks.length === 0 ? undefined : JSON.parse(Buffer.concat(chunks).toString("utf8")));
      } catch {
        reject(badMessage("internal message is not JSON"));
      }
    });
    request.on("error", reject);
  });
}

/** The route's input from the request: parameters, pass-through query, validated body, terms. */
async function inputOf(spec: RouteSpec, params: Record<string, string>, url: URL, request: IncomingMessage): Promise<RouteInputs> {
  let body: unknown;
  if (spec.body) {
    const result = v.safeParse(spec.body, await readJson(request));
    if (!result.success) throw badMessage(`invalid internal message: ${v.summarize(result.issues)}`);
    body = result.output;
  }
  const query = Object.fromEntries((spec.query ?? []).map((name) => [name, url.searchParams.get(name) ?? undefined]));
  const terms = request.headers[TERMS_HEADER];
  return { params, query, body, acceptedTerms: spec.terms && typeof terms === "string" ? terms : undefined };
}

function answer(response: ServerResponse, outcome: Answer): void {
  const headers: Record<string, string> = { [PROTOCOL_HEADER]: INTERNAL_PROTOCOL_VERSION };
  if (outcome.body === undefined) {
    response.writeHead(outcome.status, headers).end();
    return;
  }
  const payload = JSON.stringify(outcome.body);
  response
    .writeHead(outcome.status, { ...headers, "content-type": "application/json", "content-length": Buffer.byteLength(payload) })
    .end(payload);
}

/** The terminal: an upgrade to the framed byte stream of one app (see io-frames.ts). */
function serveTerminal(service: SessionService, request: IncomingMessage, socket: Duplex): void {
  const url = new URL(request.url ?? "/", "http://supervisor");
  const params = matchPath(INTERNAL_PREFIX, routes.sessionIo, url.pathname);
  if (!params || request.headers.upgrade !== IO_UPGRADE_PROTOCOL || request.headers[PROTOCOL_HEADER] !== INTERNAL_PROTOCOL_VERSION) {
    socket.end("HTTP/1.1 400 Bad Request\r\nconnection: close\r\ncontent-length: 0\r\n\r\n");
    return;
  }
  socket.write(
    `HTTP/1.1 101 Switching Protocols\r\nconnection: upgrade\r\nupgrade: ${IO_UPGRADE_PROTOCOL}\r\n${PROTOCOL_HEADER}: ${INTERNAL_PROTOCOL_VERSION}\r\n\r\n`,
  );
  const session = service.registry.get(params.id ?? "");
  if (!session) return refuseTerminal(socket, CloseCodes.notFound, "session not found");
  const appName = url.searchParams.get("app");
  const app = appName !== null ? session.apps.get(appName) : session.soleApp;
  if (!app) {
    const reason = appName !== null ? `session runs no app named '${appName}'` : `session runs ${session.apps.size} apps — ?app= is required`;
    return refuseTerminal(socket, CloseCodes.notFound, reason);
  }
  streamTerminal(session, app, socket, parseCursor(url.searchParams.get("lastSeq")) ?? 0, service.timings.resizeThrottleMs);
}

/** Listens on the socket path (prepared by prepareSocketPath), owner-only (mode 0600). */
async function listenOnSocket(server: Server, socketPath: string): Promise<void> {
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(socketPath, () => {
      server.off("error", reject);
      resolve();
    });
  });
  await chmod(socketPath, 0o600);
}

export type InternalServer = { server: Server; close(): Promise<void> };

export async function startInternalServer(options: {
  /** Free to listen on (src/internal/socket-path.ts claimed it). */
  socketPath: string;
  service: SessionService;
  log: Logger;
}): Promise<InternalServer> {
  const { service, log } = options;
  const handlers = implementations(service);
  // Upgraded terminal sockets leave the HTTP server's books: closeAllConnections() does not
  // see them, and server.close() would wait for them forever.
  const upgraded = new Set<Duplex>();

  /** The SSE stream: taken over here, since its answer is a stream rather than JSON. */
  const serveEvents = (id: string, url: URL, response: ServerResponse) => {
    const session = service.session(id);
    response.writeHead(200, { "content-type": "text/event-stream", [PROTOCOL_HEADER]: INTERNAL_PROTOCOL_VERSION });
    response.flushHeaders();
    streamEvents(session, response, parseCursor(url.searchParams.get(EVENTS_AFTER_QUERY)) ?? 0, service.timings.heartbeatMs);
  };

  const dispatch = async (request: IncomingMessage, response: ServerResponse, url: URL): Promise<Answer | undefined> => {
    const found = findRoute(INTERNAL_PREFIX, request.method ?? "", url.pathname, ["relayed", "internal", "events"]);
    if (!found) throw new Problem("not_found", "no_such_internal_route", `${request.method} ${url.pathname}`);
    const [name, params] = found;
    if (name === "sessionEvents") {
      serveEvents(params.id ?? "", url, response);
      return undefined;
    }
    const spec = routes[name];
    const handler = handlers[name as keyof typeof handlers] as (input: RouteInputs) => unknown;
    const result = await handler(await inputOf(spec, params, url, request));
    return spec.status === 204 ? { status: 204 } : { status: spec.status, body: result };
  };

  // Each request is served under the api's request id, so the lines it causes name it.
  const server = createServer((request, response) => withRequestId(requestIdFrom(request.headers[REQUEST_ID_HEADER]), () => {
    const url = new URL(request.url ?? "/", "http://supervisor");
    log.debug("internal request", { method: request.method, path: url.pathname });
    if (request.headers[PROTOCOL_HEADER] !== INTERNAL_PROTOCOL_VERSION) {
      const mismatch = `the supervisor speaks internal protocol ${INTERNAL_PROTOCOL_VERSION}`;
      return answer(response, problemAnswer(new Problem("invalid", "internal_protocol_mismatch", mismatch)));
    }
    dispatch(request, response, url)
      .then((outcome) => outcome && answer(response, outcome))
      .catch((error: unknown) => {
        if (error instanceof Problem) return answer(response, problemAnswer(error));
        log.error("internal route failed", { path: url.pathname, error });
        if (!response.headersSent) answer(response, problemAnswer(new Problem("internal", "internal", "internal error")));
        else response.destroy();
      });
  }));

  server.on("upgrade", (request: IncomingMessage, socket: Duplex) =>
    withRequestId(requestIdFrom(request.headers[REQUEST_ID_HEADER]), () => {
      log.debug("internal request", { method: "UPGRADE", path: request.url });
      upgraded.add(socket);
      socket.once("close", () => upgraded.delete(socket));
      serveTerminal(service, request, socket);
    }),
  );

  await listenOnSocket(server, options.socketPath);
  return {
    server,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
        for (const socket of upgraded) socket.destroy();
      }),
  };
}
