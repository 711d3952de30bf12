// The Telo kernel's inspect server as the runner's debug relay sees it: `GET /events` is a
// text/event-stream of JSON frames with `id:` lines; `last-event-id` resumes after that id.
import type { ServerResponse } from "node:http";
import { listenHttp, type Closable } from "./listeners.ts";

export interface DebugFrame {
  kind: "event";
  timestamp: string;
  event: string;
  payload?: unknown;
}

/** Frames kept for resumption; a real kernel keeps a bounded history too. */
const HISTORY = 1000;

export class KernelDebugStream {
  private frames: { id: number; text: string }[] = [];
  private nextId = 1;
  private readonly clients = new Set<ServerResponse>();
  private server?: Closable;

  async listen(ip: string, port: number): Promise<void> {
    this.server = await listenHttp(ip, port, (req, res) => {
      const url = new URL(req.url ?? "/", "http://x");
      if (req.method !== "GET" || url.pathname !== "/events") {
        res.writeHead(404, { "content-type": "application/json" });
        res.end(JSON.stringify({ error: "not found" }));
        return;
      }
      res.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache", connection: "keep-alive" });
      const after = Number(req.headers["last-event-id"] ?? 0) || 0;
      for (const f of this.frames) if (f.id > after) res.write(f.text);
      this.clients.add(res);
      res.on("close", () => this.clients.delete(res));
    });
  }

  emit(event: string, payload?: unknown): void {
    const frame: DebugFrame = { kind: "event", timestamp: new Date().toISOString(), event };
    if (payload !== undefined) frame.payload = payload;
    const id = this.nextId++;
    const text = `id: ${id}\ndata: ${JSON.stringify(frame)}\n\n`;
    this.frames.push({ id, text });
    if (this.frames.length > HISTORY) this.frames.shift();
    for (const c of this.clients) c.write(text);
  }

  async close(): Promise<void> {
    for (const c of this.clients) c.end();
    this.clients.clear();
    await this.server?.close();
  }
}

/**
 * The inspect address of a container running the Telo kernel, from `--inspect <addr>` or
 * `--inspect=<addr>` in its command line; `$VAR` / `${VAR}` expand from the container's env.
 */
export function inspectPort(argv: string[], env: Record<string, string>): number | undefined {
  const words = argv.flatMap((a) => a.split(/\s+/)).map((w) => w.replace(/^["']|["']$/g, ""));
  const line = words.join(" ");
  if (!/\btelo\b/.test(line)) return undefined;
  let addr: string | undefined;
  for (let i = 0; i < words.length; i++) {
    const w = words[i]!;
    if (w === "--inspect") addr = words[i + 1];
    else if (w.startsWith("--inspect=")) addr = w.slice("--inspect=".length);
  }
  if (addr === undefined) return undefined;
  addr = addr.replace(/\$\{?([A-Za-z_][A-Za-z0-9_]*)\}?/g, (_m, name: string) => env[name] ?? "");
  const port = Number(addr.slice(addr.lastIndexOf(":") + 1));
  return Number.isInteger(port) && port > 0 && port < 65536 ? port : undefined;
}
