/**
 * Terminal upgrades on the runner's own server, before Hono keeps anything: the request runs
 * through the routes once (access checks, CORS, the request log) to be allowed or refused; an
 * allowed one is spliced to its supervisor (src/internal/terminal-splice.ts), and neither the
 * request, its context nor any middleware is held for the terminal's life. A refused one gets
 * the routes' answer as it is (status, headers such as `www-authenticate`, JSON body).
 */
import { type IncomingMessage, STATUS_CODES, type Server } from "node:http";
import type { Duplex } from "node:stream";
import type { Hono } from "hono";
import { TERMINAL_UPGRADE, type UpgradeEnv } from "../../handlers/session-io.ts";
import type { TerminalHandoff } from "../internal/terminal-handoff.ts";
import type { Splices } from "../internal/terminal-splice.ts";
import { isWebSocketKey } from "../internal/ws-wire.ts";
import type { Logger } from "../log.ts";

/** Headers of our own that a refusal's answer sets itself. */
const FRAMING_HEADERS = new Set(["connection", "content-length", "transfer-encoding"]);

async function refuse(socket: Duplex, response: Response): Promise<void> {
  const body = Buffer.from(await response.arrayBuffer());
  const lines = [`HTTP/1.1 ${response.status} ${STATUS_CODES[response.status] ?? ""}`];
  response.headers.forEach((value, name) => {
    if (!FRAMING_HEADERS.has(name)) lines.push(`${name}: ${value}`);
  });
  lines.push("connection: close", `content-length: ${body.byteLength}`, "", "");
  socket.end(Buffer.concat([Buffer.from(lines.join("\r\n"), "latin1"), body]));
}

function requestOf(request: IncomingMessage): { url: URL; headers: Headers } {
  const headers = new Headers();
  for (const [name, value] of Object.entries(request.headers)) {
    if (value !== undefined) headers.append(name, Array.isArray(value) ? value.join(", ") : value);
  }
  return { url: new URL(request.url ?? "/", `http://${request.headers.host ?? "localhost"}`), headers };
}

/**
 * A socket error ends the socket. Not a closure: this listener stays on the socket for the
 * terminal's whole life, and a closure made in the upgrade handler would keep that handler's
 * scope with it (the request, its headers, URL and the route's answer): kilobytes per terminal.
 */
function destroyOnError(this: Duplex): void {
  this.destroy();
}

/** A WebSocket handshake this server can complete (RFC 6455 4.2.1); undefined when it is not one. */
function handshakeKey(request: IncomingMessage): string | undefined {
  const { upgrade, "sec-websocket-key": key, "sec-websocket-version": version } = request.headers;
  const valid = request.method === "GET" && upgrade?.toLowerCase() === "websocket" && isWebSocketKey(key) && (version === "13" || version === "8");
  return valid ? key : undefined;
}

export function serveUpgrades(server: Server, app: Hono, splices: Splices, handoff: TerminalHandoff | undefined, log: Logger): void {
  server.on("upgrade", (request: IncomingMessage, socket: Duplex, head: Buffer) => {
    socket.on("error", destroyOnError);
    const env: UpgradeEnv & { incoming: IncomingMessage; outgoing: undefined } = { incoming: request, outgoing: undefined, [TERMINAL_UPGRADE]: "pending" };
    let target: { url: URL; headers: Headers };
    try {
      target = requestOf(request);
    } catch {
      void refuse(socket, Response.json({ error: "bad_request", message: "malformed request" }, { status: 400 }));
      return;
    }
    Promise.resolve(app.request(target.url, { headers: target.headers }, env))
      .then((response) => {
        const start = env[TERMINAL_UPGRADE];
        if (typeof start !== "function") return refuse(socket, response);
        const key = handshakeKey(request);
        if (key === undefined) return refuse(socket, Response.json({ error: "bad_request", message: "not a WebSocket handshake" }, { status: 400 }));
        start({ request, socket, head, key, splices, handoff });
        return undefined;
      })
      .catch((error: unknown) => {
        log.warn("terminal upgrade failed", { error });
        socket.destroy();
      });
  });
}
