/**
 * A refused WebSocket upgrade answered in full. The WebSocket adapter writes a refused
 * upgrade's answer itself, as a bare status line with no headers and no body, so a client
 * refused for a missing token would get neither `{"error":"unauthorized"}` nor
 * `www-authenticate`. The middleware keeps what the routes answered to an upgrade request;
 * `answerRefusedUpgrades` makes that the answer the socket gets.
 */
import type { IncomingMessage, Server } from "node:http";
import { STATUS_CODES } from "node:http";
import type { Duplex } from "node:stream";
import type { MiddlewareHandler } from "hono";

type Refusal = { status: number; headers: [string, string][]; body: Buffer };

const refusals = new WeakMap<IncomingMessage, Refusal>();

/** Keeps the answer to every upgrade request the routes refused (status 400 and above). */
export function keepUpgradeRefusals(): MiddlewareHandler<{ Bindings: { incoming?: IncomingMessage } }> {
  return async (c, next) => {
    await next();
    const incoming = c.env?.incoming;
    if (!incoming || c.req.header("upgrade")?.toLowerCase() !== "websocket" || c.res.status < 400) return;
    const body = Buffer.from(await c.res.clone().arrayBuffer());
    refusals.set(incoming, { status: c.res.status, headers: [...c.res.headers], body });
  };
}

/** The HTTP/1.1 answer a refused upgrade's socket is sent before it closes. */
export function refusalResponse(refusal: Refusal): Buffer {
  const lines = [`HTTP/1.1 ${refusal.status} ${STATUS_CODES[refusal.status] ?? ""}`];
  for (const [name, value] of refusal.headers) if (name !== "content-length" && name !== "connection") lines.push(`${name}: ${value}`);
  lines.push("connection: close", `content-length: ${refusal.body.byteLength}`, "", "");
  return Buffer.concat([Buffer.from(lines.join("\r\n")), refusal.body]);
}

/**
 * Must be registered before the adapter's upgrade listener: the socket of a refused upgrade is
 * ended with the routes' full answer instead of the adapter's bare status line.
 */
export function answerRefusedUpgrades(server: Server): void {
  server.on("upgrade", (request: IncomingMessage, socket: Duplex) => {
    const end = socket.end.bind(socket);
    socket.end = ((...args: Parameters<Duplex["end"]>) => {
      const refusal = refusals.get(request);
      if (!refusal) return end(...args);
      refusals.delete(request);
      return end(refusalResponse(refusal));
    }) as Duplex["end"];
  });
}
