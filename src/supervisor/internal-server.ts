/**
 * The supervisor's side of the internal socket: HTTP/1.1 on a Unix socket (mode 0600) that
 * only the api process of the same pod can reach. Each route validates its message with the
 * shared schemas and answers with the status and body the api relays.
 */
import { chmod } from "node:fs/promises";
import { type IncomingMessage, type Server, type ServerResponse, createServer } from "node:http";
import type { Duplex } from "node:stream";
import * as v from "valibot";
import { CloseCodes } from "../contract/streams.ts";
import {
  CreateAppSessionMessageSchema,
  CreateSessionMessageSchema,
  INTERNAL_PROTOCOL_VERSION,
  IO_UPGRADE_PROTOCOL,
  PROTOCOL_HEADER,
  ProbeMessageSchema,
  SetAppsMessageSchema,
  WorkspaceApplyMessageSchema,
  parseCursor,
} from "../internal/protocol.ts";
import type { Logger } from "../log.ts";
import { streamEvents } from "./event-stream.ts";
import type { Outcome, SessionService } from "./session-service.ts";
import { refuseTerminal, streamTerminal } from "./terminal-stream.ts";

const MAX_MESSAGE_BYTES = 8 * 1024 * 1024;

type RouteContext = { params: string[]; url: URL; body: () => Promise<unknown>; request: IncomingMessage; response: ServerResponse };
type Route = {
  method: string;
  pattern: RegExp;
  /** Answers with an outcome, or takes the response over (streams) and answers undefined. */
  handle: (context: RouteContext) => Promise<Outcome | undefined> | Outcome | undefined;
};

class BadMessage extends Error {}

function parsed<S extends v.GenericSchema>(schema: S, value: unknown): v.InferOutput<S> {
  const result = v.safeParse(schema, value);
  if (!result.success) throw new BadMessage(`invalid internal message: ${v.summarize(result.issues)}`);
  return result.output;
}

function routes(service: SessionService): Route[] {
  const id = "([^/]+)";
  return [
    { method: "GET", pattern: /^\/internal\/capabilities$/, handle: () => service.capabilities() },
    { method: "POST", pattern: /^\/internal\/probe$/, handle: async ({ body }) => service.probe(parsed(ProbeMessageSchema, await body()).config) },
    {
      method: "POST",
      pattern: /^\/internal\/sessions$/,
      handle: async ({ body }) => {
        const message = parsed(CreateSessionMessageSchema, await body());
        return service.create(message.request, message.acceptedTerms);
      },
    },
    {
      method: "POST",
      pattern: new RegExp(`^/internal/apps/${id}/sessions$`),
      handle: async ({ params, body }) => {
        const message = parsed(CreateAppSessionMessageSchema, await body());
        return service.createFromCatalog(params[0]!, message.request, message.acceptedTerms);
      },
    },
    { method: "GET", pattern: new RegExp(`^/internal/sessions/${id}$`), handle: ({ params }) => service.document(params[0]!) },
    { method: "DELETE", pattern: new RegExp(`^/internal/sessions/${id}$`), handle: ({ params }) => service.stop(params[0]!) },
    {
      method: "GET",
      pattern: new RegExp(`^/internal/sessions/${id}/events$`),
      handle: ({ params, url, response }) => {
        const session = service.registry.get(params[0]!);
        if (!session) return service.document(params[0]!);
        response.writeHead(200, { "content-type": "text/event-stream", [PROTOCOL_HEADER]: INTERNAL_PROTOCOL_VERSION });
        response.flushHeaders();
        streamEvents(session, response, parseCursor(url.searchParams.get("after")) ?? 0, service.timings.heartbeatMs);
        return undefined;
      },
    },
    { method: "GET", pattern: new RegExp(`^/internal/sessions/${id}/workspace$`), handle: ({ params }) => service.workspaceTree(params[0]!) },
    {
      method: "POST",
      pattern: new RegExp(`^/internal/sessions/${id}/workspace$`),
      handle: async ({ params, body }) => service.workspaceApply(params[0]!, parsed(WorkspaceApplyMessageSchema, await body())),
    },
    {
      method: "GET",
      pattern: new RegExp(`^/internal/sessions/${id}/workspace/file$`),
      handle: ({ params, url }) => service.workspaceFile(params[0]!, url.searchParams.get("path") ?? undefined),
    },
    {
      method: "POST",
      pattern: new RegExp(`^/internal/sessions/${id}/reload$`),
      handle: ({ params, url }) => service.reload(params[0]!, url.searchParams.get("app") ?? undefined),
    },
    {
      method: "PUT",
      pattern: new RegExp(`^/internal/sessions/${id}/apps$`),
      handle: async ({ params, body }) => service.setApps(params[0]!, parsed(SetAppsMessageSchema, await body())),
    },
    { method: "POST", pattern: new RegExp(`^/internal/sessions/${id}/resume$`), handle: ({ params }) => service.resume(params[0]!) },
  ];
}

function readJson(request: IncomingMessage): Promise<unknown> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    request.on("data", (chunk: Buffer) => {
      size += chunk.byteLength;
      if (size > MAX_MESSAGE_BYTES) {
        reject(new BadMessage("internal message too large"));
        request.destroy();
        return;
      }
      chunks.push(chunk);
    });
    request.on("end", () => {
      try {
        resolve(chunks.length === 0 ? undefined : JSON.parse(Buffer.concat(chunks).toString("utf8")));
      } catch {
        reject(new BadMessage("internal message is not JSON"));
      }
    });
    request.on("error", reject);
  });
}

function answer(response: ServerResponse, outcome: Outcome): void {
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

export type InternalServer = { server: Server; close(): Promise<void> };

export async function startInternalServer(options: {
  /** Free to listen on (src/internal/socket-path.ts claimed it). */
  socketPath: string;
  service: SessionService;
  log: Logger;
}): Promise<InternalServer> {
  const { service, log } = options;
  const table = routes(service);
  // Upgraded terminal sockets leave the HTTP server's books: closeAllConnections() does not
  // see them, and server.close() would wait for them forever (issue 9, bug 1).
  const upgraded = new Set<Duplex>();

  const server = createServer((request, response) => {
    const url = new URL(request.url ?? "/", "http://supervisor");
    if (request.headers[PROTOCOL_HEADER] !== INTERNAL_PROTOCOL_VERSION) {
      return answer(response, {
        status: 400,
        body: { error: "internal_protocol_mismatch", message: `the supervisor speaks internal protocol ${INTERNAL_PROTOCOL_VERSION}` },
      });
    }
    const route = table.find((candidate) => candidate.method === request.method && candidate.pattern.test(url.pathname));
    if (!route) return answer(response, { status: 404, body: { error: "no_such_internal_route", message: `${request.method} ${url.pathname}` } });
    const params = (route.pattern.exec(url.pathname) ?? []).slice(1).map((part) => decodeURIComponent(part));
    Promise.resolve()
      .then(() => route.handle({ params, url, body: () => readJson(request), request, response }))
      .then((outcome) => outcome && answer(response, outcome))
      .catch((error: unknown) => {
        if (error instanceof BadMessage) return answer(response, { status: 400, body: { error: "bad_internal_message", message: error.message } });
        log.error("internal route failed", { path: url.pathname, error });
        if (!response.headersSent) answer(response, { status: 500, body: { statusCode: 500, error: "Internal Server Error", message: "internal error" } });
        else response.destroy();
      });
  });

  server.on("upgrade", (request: IncomingMessage, socket: Duplex) => {
    const url = new URL(request.url ?? "/", "http://supervisor");
    const match = /^\/internal\/sessions\/([^/]+)\/io$/.exec(url.pathname);
    if (!match || request.headers.upgrade !== IO_UPGRADE_PROTOCOL || request.headers[PROTOCOL_HEADER] !== INTERNAL_PROTOCOL_VERSION) {
      socket.end("HTTP/1.1 400 Bad Request\r\nconnection: close\r\ncontent-length: 0\r\n\r\n");
      return;
    }
    upgraded.add(socket);
    socket.once("close", () => upgraded.delete(socket));
    socket.write(
      `HTTP/1.1 101 Switching Protocols\r\nconnection: upgrade\r\nupgrade: ${IO_UPGRADE_PROTOCOL}\r\n${PROTOCOL_HEADER}: ${INTERNAL_PROTOCOL_VERSION}\r\n\r\n`,
    );
    const session = service.registry.get(decodeURIComponent(match[1]!));
    if (!session) return refuseTerminal(socket, CloseCodes.notFound, "session not found");
    const appName = url.searchParams.get("app");
    const app = appName !== null ? session.apps.get(appName) : session.soleApp;
    if (!app) {
      const reason = appName !== null ? `session runs no app named '${appName}'` : `session runs ${session.apps.size} apps — ?app= is required`;
      return refuseTerminal(socket, CloseCodes.notFound, reason);
    }
    streamTerminal(session, app, socket, parseCursor(url.searchParams.get("lastSeq")) ?? 0, service.timings.resizeThrottleMs);
  });

  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(options.socketPath, () => {
      server.off("error", reject);
      resolve();
    });
  });
  await chmod(options.socketPath, 0o600);

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
