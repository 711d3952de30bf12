/**
 * A backend for the core's tests, standing in for the cluster until the Kubernetes backend
 * is used. Its workloads are driven two ways, both through the runner's real surfaces:
 * - `config.script` (extra config keys reach the backend unchanged) sets up the start:
 *   delays, start failures, progress, endpoints, an initial output, a timed exit;
 * - stdin lines starting with `!` are commands (`!exit 3`, `!fail msg`, `!debug {json}`,
 *   `!output <n>`, `!endpoints {json}`, `!reach <port> <state>`, `!env NAME`, `!ended {json}`);
 *   everything else is echoed,
 *   like a terminal would, so tests type and read the echo.
 * Watch sessions get an in-memory workspace.
 */
import { createHash } from "node:crypto";
import * as v from "valibot";
import type { Backend, BackendCallbacks, Started, StartSpec, Workload, WorkspaceClient } from "../../src/sessions/backend-seam.ts";
import { SessionStartError } from "../../src/sessions/backend-seam.ts";
import type { ResolvedApp, RunStatus } from "../../src/contract/wire.ts";

const ScriptSchema = v.object({
  startDelayMs: v.optional(v.number(), 0),
  startError: v.optional(v.object({ stage: v.picklist(["pull", "inspect", "create", "start", "attach", "daemon"]), message: v.string() })),
  progress: v.optional(v.array(v.object({ phase: v.picklist(["build", "provision", "boot"]), message: v.string(), app: v.optional(v.string()) })), []),
  output: v.optional(v.string()),
  exitAfterMs: v.optional(v.number()),
  exitCode: v.optional(v.number(), 0),
  stopError: v.optional(v.string()),
  setAppsError: v.optional(v.string()),
  snapshotError: v.optional(v.string()),
});
type Script = v.InferOutput<typeof ScriptSchema>;

export function createScriptedBackend(): Backend {
  return {
    describe: () => ({
      displayName: "Scripted test backend",
      description: "Stands in for a cluster in the core's tests.",
      io: ["tty", "streams"],
      ports: true,
      config: { imageDefault: "telorun/node:test", enforced: false, registryUrl: true },
    }),
    async probe(config) {
      if (config.image === "unavailable") return { status: "unavailable", message: "backend unavailable", remediation: "start it" };
      return { status: "ready" };
    },
    validateConfig(config) {
      return config.image === "forbidden:image" ? `base image '${config.image}' is not offered by this runner. Allowed images: telorun/node:test` : undefined;
    },
    async start(spec, callbacks) {
      const script = v.parse(ScriptSchema, spec.config.script ?? {});
      return startWorkload(spec, script, callbacks);
    },
  };
}

async function startWorkload(spec: StartSpec, script: Script, callbacks: BackendCallbacks): Promise<Started> {
  if (script.startDelayMs > 0) await new Promise((resolve) => setTimeout(resolve, script.startDelayMs));
  if (script.startError) throw new SessionStartError(script.startError.stage, script.startError.message);
  const { emit } = callbacks;
  for (const step of script.progress) emit({ type: "progress", ...step });

  let apps: ResolvedApp[] = spec.apps;
  let finished = false;
  let resolveDone!: () => void;
  const done = new Promise<void>((resolve) => (resolveDone = resolve));
  const timers = new Set<NodeJS.Timeout>();
  const files = new Map<string, Buffer>(spec.bundle.files.map((file) => [file.relativePath, Buffer.from(file.contents, file.encoding ?? "utf8")]));

  const finish = (status: RunStatus | undefined) => {
    if (finished) return;
    finished = true;
    for (const timer of timers) clearTimeout(timer);
    if (status) emit({ type: "status", status: callbacks.isUserStopped() ? { kind: "stopped" } : status });
    resolveDone();
  };
  const say = (app: string, text: string) =>
    emit({ type: "output", app, bytes: Buffer.from(text), tag: apps.find((a) => a.name === app)?.io === "streams" ? "stdout" : "tty" });

  const command = (app: string, line: string) => {
    const [verb, ...rest] = line.slice(1).split(" ");
    const argument = rest.join(" ");
    switch (verb) {
      case "exit":
        return finish(spec.mode === "run" ? { kind: "exited", code: Number(argument) } : { kind: "failed", message: "workload ended" });
      case "fail":
        return finish({ kind: "failed", message: argument });
      case "debug":
        return emit({ type: "debug", app, frame: JSON.parse(argument) });
      case "output":
        return emit({ type: "output", app, bytes: Buffer.alloc(Number(argument), "x"), tag: "tty" });
      case "endpoints":
        return emit({ type: "endpoints", app, ...JSON.parse(argument) });
      case "reach": {
        const [port, state] = rest;
        return emit({ type: "reachability", app, port: Number(port), state: state as "reachable" });
      }
      case "env":
        return say(app, `${argument}=${spec.env[argument] ?? "<unset>"}\r\n`);
      case "ended":
        return emit({ type: "runEnded", app, outcome: JSON.parse(argument || "{}") });
      default:
        return say(app, `unknown command ${verb}\r\n`);
    }
  };

  const workspace: WorkspaceClient = {
    async tree() {
      return { files: [...files].map(([path, bytes]) => ({ path, hash: createHash("sha256").update(bytes).digest("hex") })) };
    },
    async apply(changes) {
      for (const write of changes.write ?? []) files.set(write.path, Buffer.from(write.content, write.encoding ?? "utf8"));
      for (const path of changes.delete ?? []) files.delete(path);
      return { written: changes.write?.length ?? 0, deleted: changes.delete?.length ?? 0 };
    },
    async file(path) {
      const bytes = files.get(path);
      if (!bytes) throw new Error(`no such file '${path}'`);
      return { content: bytes.toString("utf8"), size: bytes.byteLength };
    },
    async snapshot() {
      if (script.snapshotError) throw new Error(script.snapshotError);
      return {
        files: [...files].map(([path, bytes]) => ({
          path,
          hash: createHash("sha256").update(bytes).digest("hex"),
          content: bytes.toString("base64"),
          encoding: "base64" as const,
        })),
      };
    },
  };

  const endpoints = () => apps.flatMap((app) => app.ports.map((port) => ({ host: "", port: port.port, protocol: port.protocol })));
  if (script.output !== undefined) for (const app of apps) say(app.name, script.output);
  if (script.exitAfterMs !== undefined) {
    timers.add(setTimeout(() => finish({ kind: "exited", code: script.exitCode }), script.exitAfterMs));
  }

  const lineBuffers = new Map<string, string>();
  const workload: Workload = {
    done,
    ...(spec.mode === "watch" && { workspace }),
    writeStdin(app, bytes) {
      if (finished) return;
      const text = (lineBuffers.get(app) ?? "") + Buffer.from(bytes).toString("utf8");
      const lines = text.split(/\r?\n|\r/);
      lineBuffers.set(app, lines.pop() ?? "");
      for (const line of lines) {
        if (line.startsWith("!")) command(app, line);
        else say(app, `${line}\r\n`);
      }
    },
    resize(app, cols, rows) {
      say(app, `[resize ${cols}x${rows}]\r\n`);
    },
    async stop() {
      if (script.stopError) throw new Error(script.stopError);
      finish({ kind: "stopped" });
    },
    ...(spec.mode === "watch" && {
      async reload(app: string) {
        emit({ type: "debug", app, frame: { kind: "event", event: "Kernel.Starting", timestamp: new Date().toISOString() } });
        emit({ type: "debug", app, frame: { kind: "event", event: "Kernel.Stopped", timestamp: new Date().toISOString(), payload: { exitCode: 0 } } });
      },
      async setApps(next: ResolvedApp[]) {
        if (script.setAppsError) throw new Error(script.setAppsError);
        apps = next;
        emit({ type: "status", status: { kind: "running", endpoints: endpoints() } });
      },
      async suspend() {
        finish(undefined);
      },
    }),
  };
  return { workload, running: { kind: "running", endpoints: endpoints() } };
}
