// The Telo kernel's inspect server as the runner's debug relay sees it: `GET /events` is a
// text/event-stream of JSON frames with `id:` lines; `last-event-id` resumes after that id.
import type { ServerResponse } from "node:http";
import type { ContainerProcess } from "./container.ts";
import { listenHttp, type Closable } from "./listeners.ts";
import type { WorkspaceTree } from "./workspace.ts";

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

export interface KernelScript {
  /** The ports `Kernel.PortsResolved` reports. */
  ports: { port: number; protocol: "tcp" | "udp" }[];
  /** The load fails: `Kernel.RunFailed` instead of PortsResolved/Started. */
  runFails: boolean;
  /** The kernel's version, reported in `Kernel.Starting` (see kernelVersionOf). */
  version: string;
}

/** The version of a kernel image whose tag names none (`latest-slim`, a test image). */
export const SIM_KERNEL_VERSION = "0.97.0";

/** The first kernel that accepts a workspace marker without blocks; older ones need `modules`. */
const FIRST_COMMENT_MARKER_KERNEL = [0, 96, 0] as const;

const VERSION_TAG = /^(\d+)\.(\d+)\.(\d+)(?:-[0-9A-Za-z.-]+?)?(?:_[0-9A-Za-z.-]+)?$/;

/** A version image's tag is `<V>-<variant>` (or `<V>`), `+` written `_`; any other image runs SIM_KERNEL_VERSION. */
export function kernelVersionOf(image: string): string {
  const tag = /:([^/:@]+)(@.*)?$/.exec(image)?.[1];
  if (tag === undefined) return SIM_KERNEL_VERSION;
  for (const candidate of [tag.replace(/-[A-Za-z0-9_.]+$/, ""), tag]) {
    if (VERSION_TAG.test(candidate)) return candidate.replace("_", "+");
  }
  return SIM_KERNEL_VERSION;
}

function acceptsCommentMarker(version: string): boolean {
  const parts = version.split(/[-+]/)[0]!.split(".").map(Number);
  for (let index = 0; index < 3; index++) {
    if (parts[index]! !== FIRST_COMMENT_MARKER_KERNEL[index]) return parts[index]! > FIRST_COMMENT_MARKER_KERNEL[index]!;
  }
  // 0.96.0 itself accepts it; its prereleases precede it and do not.
  return !/^[^+]*-/.test(version);
}

/** Why this kernel refuses the workspace marker at the root, or undefined (none, or one it reads). */
function markerRefusal(workspace: WorkspaceTree, version: string): string | undefined {
  const marker = workspace.get("telo-workspace.yaml");
  if (marker === undefined || acceptsCommentMarker(version)) return undefined;
  const blocks = marker.toString("utf8").split("\n").filter((line) => line.trim() !== "" && !line.trimStart().startsWith("#"));
  return blocks.length === 0 ? "telo-workspace.yaml declares no modules: list the modules this workspace shares (modules: [\"*\"])" : undefined;
}

/** What `telo run --inspect` prints as it starts. */
export const HELD_OPEN_NOTICE = "[inspect] holding the application open";

/**
 * The lifecycle frames of a Telo kernel in a container: it boots once its entry exists (when the
 * command waits for `$TELO_ENTRY`), and under `--watch` every workspace write reloads it
 * (`Kernel.Stopped`, then a new boot). `script()` is read at every boot, so a test can change
 * what the next reload reports by updating the pod's annotations. Like the real kernel,
 * `telo run --inspect` (not under `--watch`) announces that it holds the application open for
 * its debugger before anything has run: the line says nothing about the run's end, and neither
 * does any frame when the app ends.
 */
export function driveKernel(debug: KernelDebugStream, workspace: WorkspaceTree, proc: ContainerProcess, argv: string[], env: Record<string, string>, script: () => KernelScript): void {
  const watchMode = argv.some((a) => /(^|\s)--watch(\s|$)/.test(a));
  if (!watchMode) proc.print("stdout", Buffer.from(`${HELD_OPEN_NOTICE}\n`));
  const entry = argv.join(" ").includes("TELO_ENTRY") ? env.TELO_ENTRY?.replace(/^\/workspace\//, "") : undefined;
  let booted = false;
  const boot = () => {
    booted = true;
    const { ports, runFails, version } = script();
    debug.emit("Kernel.Starting", { version });
    const refusal = entry === undefined ? undefined : markerRefusal(workspace, version);
    if (refusal !== undefined) {
      debug.emit("Kernel.RunFailed", { code: "INVALID_WORKSPACE_MARKER", message: refusal });
      return;
    }
    if (runFails) {
      debug.emit("Kernel.RunFailed", { code: "SIM_RUN_FAILED", message: "simulated run failure" });
      return;
    }
    debug.emit("Kernel.PortsResolved", { ports });
    debug.emit("Kernel.Started", {});
  };
  const onChange = () => {
    if (!booted) {
      if (entry === undefined || workspace.has(entry)) boot();
      return;
    }
    if (!watchMode) return;
    debug.emit("Kernel.Stopped", { exitCode: 0 });
    boot();
  };
  workspace.on("change", onChange);
  // A real `telo run` reports no `Kernel.Stopped` when its app ends: the runner learns the
  // run's end from the pod. Only a watch kernel's reloads say it (above).
  proc.once("exit", () => workspace.off("change", onChange));
  if (entry === undefined || workspace.has(entry)) boot();
}
