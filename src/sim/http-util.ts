// Small response/request helpers shared by the API, discovery and control routes.
import type { IncomingMessage, ServerResponse } from "node:http";
import { StatusError } from "./status.ts";

/** The apiserver refuses request bodies over 3 MiB; so does the simulator. */
const MAX_BODY = 3 * 1024 * 1024;

export function sendJson(res: ServerResponse, code: number, body: unknown, headers: Record<string, string> = {}): void {
  const text = typeof body === "string" ? body : JSON.stringify(body);
  res.writeHead(code, { "content-type": "application/json", "cache-control": "no-cache, private", ...headers });
  res.end(text);
}

export function sendStatus(res: ServerResponse, err: StatusError): void {
  if (res.headersSent) {
    res.destroy();
    return;
  }
  sendJson(res, err.code, err.body(), err.headers);
}

export async function readBody(req: IncomingMessage): Promise<string> {
  return (await readBodyBytes(req)).toString("utf8");
}

export async function readBodyBytes(req: IncomingMessage): Promise<Buffer> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req) {
    size += (chunk as Buffer).length;
    if (size > MAX_BODY) throw new StatusError(413, "RequestEntityTooLarge", "Request entity too large: limit is 3145728");
    chunks.push(chunk as Buffer);
  }
  return Buffer.concat(chunks);
}
