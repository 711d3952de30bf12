// The watch pod's shared workspace volume (an in-memory file tree) and the `workspace`
// container's HTTP surface over it (docs/api.md "Watch sessions"): list, change set, read, snapshot.
import { createHash } from "node:crypto";
import type { IncomingMessage, ServerResponse } from "node:http";
import { posix } from "node:path";
import { EventEmitter } from "node:events";
import * as v from "valibot";
import { listenHttp, type Closable } from "./listeners.ts";

const EXCLUDED = new Set(["node_modules", ".telo", ".git"]);

const Encoding = v.optional(v.picklist(["utf8", "base64"]), "utf8");

const ChangeSetSchema = v.object({
  write: v.optional(v.array(v.object({ path: v.string(), content: v.string(), encoding: Encoding }))),
  delete: v.optional(v.array(v.string())),
});
export type ChangeSet = v.InferInput<typeof ChangeSetSchema>;

function normalise(p: string): string {
  const n = posix.normalize(p.replace(/^\/+/, ""));
  if (n === "" || n === "." || n.startsWith("../") || n === ".." || posix.isAbsolute(p) || p.includes("\0")) {
    throw new Error(`invalid workspace path: ${p}`);
  }
  return n;
}

function sha256(data: Buffer): string {
  return createHash("sha256").update(data).digest("hex");
}

/** The emptyDir every container of a watch pod mounts at /workspace. */
export class WorkspaceTree extends EventEmitter<{ change: [string[]] }> {
  private readonly files = new Map<string, Buffer>();

  has(path: string): boolean {
    return this.files.has(normalise(path));
  }

  /** A file's bytes, for the container filesystem (container-fs.ts). */
  get(path: string): Buffer | undefined {
    return this.files.get(normalise(path));
  }

  /** Writes one file as a program in a container would, telling the watchers. */
  put(path: string, data: Buffer): void {
    const n = normalise(path);
    this.files.set(n, data);
    this.emit("change", [n]);
  }

  /** Removes one file as a program in a container would, telling the watchers. */
  remove(path: string): void {
    const n = normalise(path);
    if (this.files.delete(n)) this.emit("change", [n]);
  }

  apply(change: ChangeSet): { written: number; deleted: number } {
    const parsed = v.parse(ChangeSetSchema, change);
    const writes = (parsed.write ?? []).map((w) => ({ path: normalise(w.path), data: Buffer.from(w.content, w.encoding) }));
    const deletes = (parsed.delete ?? []).map(normalise);
    for (const w of writes) this.files.set(w.path, w.data);
    let deleted = 0;
    for (const d of deletes) if (this.files.delete(d)) deleted++;
    const touched = [...writes.map((w) => w.path), ...deletes];
    if (touched.length > 0) this.emit("change", touched);
    return { written: writes.length, deleted };
  }

  private visible(): [string, Buffer][] {
    return [...this.files]
      .filter(([p]) => !p.split("/").some((seg) => EXCLUDED.has(seg)))
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  }

  tree() {
    return { files: this.visible().map(([path, data]) => ({ path, hash: sha256(data) })) };
  }

  read(path: string, encoding: "utf8" | "base64") {
    const data = this.files.get(normalise(path));
    if (!data) throw new Error(`ENOENT: no such file or directory, open '/workspace/${path}'`);
    return { content: data.toString(encoding), size: data.length };
  }

  snapshot() {
    return { files: this.visible().map(([path, data]) => ({ path, hash: sha256(data), content: data.toString("base64"), encoding: "base64" as const })) };
  }
}

async function json(req: IncomingMessage): Promise<unknown> {
  const chunks: Buffer[] = [];
  for await (const c of req) chunks.push(c as Buffer);
  return JSON.parse(Buffer.concat(chunks).toString("utf8"));
}

function reply(res: ServerResponse, code: number, body: unknown): void {
  res.writeHead(code, { "content-type": "application/json" });
  res.end(JSON.stringify(body));
}

/** Serves the workspace surface on ip:port; errors answer 500 `{error}` as the Telo app does. */
export function serveWorkspace(tree: WorkspaceTree, ip: string, port: number): Promise<Closable> {
  return listenHttp(ip, port, (req, res) => {
    const url = new URL(req.url ?? "/", "http://x");
    const route = `${req.method} ${url.pathname}`;
    const handle = async (): Promise<void> => {
      switch (route) {
        case "GET /workspace":
          return reply(res, 200, tree.tree());
        case "POST /workspace":
          return reply(res, 200, tree.apply((await json(req)) as ChangeSet));
        case "GET /workspace/file": {
          const encoding = url.searchParams.get("encoding") === "base64" ? "base64" : "utf8";
          return reply(res, 200, tree.read(url.searchParams.get("path") ?? "", encoding));
        }
        case "GET /workspace/snapshot":
          return reply(res, 200, tree.snapshot());
        default:
          return reply(res, 404, { error: `no route for ${route}` });
      }
    };
    handle().catch((err: unknown) => reply(res, 500, { error: err instanceof Error ? err.message : String(err) }));
  });
}
