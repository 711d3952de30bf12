/**
 * The api process loads only what it serves (its memory, docs/benchmarks.md): neither the simulator
 * nor a Kubernetes client is reachable from its entries through any import, static or dynamic.
 * Read from the source's own import statements, so a new import that breaks this fails here;
 * and, for what no reading of import statements sees (a package that loads another), from the
 * modules a running api process has actually loaded after serving requests.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { mkdtemp, readFile, rm } from "node:fs/promises";
import { readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { freePort } from "../support/ports.ts";
import { stopChild } from "../support/processes.ts";
import { waitFor } from "../support/wait.ts";

const ROOT = fileURLToPath(new URL("../..", import.meta.url));
const IMPORT = /(?:^|\n)\s*(?:import|export)\s[^;]*?from\s+"([^"]+)"|import\(\s*"([^"]+)"\s*\)|(?:^|\n)\s*import\s+"([^"]+)"/g;

/** Every module reachable from `entry`: project files by path, packages by name. */
function reachable(entry: string): Set<string> {
  const seen = new Set<string>();
  const queue = [resolve(ROOT, entry)];
  while (queue.length > 0) {
    const file = queue.pop()!;
    if (seen.has(file)) continue;
    seen.add(file);
    const source = readFileSync(file, "utf8");
    for (const match of source.matchAll(IMPORT)) {
      const specifier = match[1] ?? match[2] ?? match[3]!;
      if (specifier.startsWith(".")) queue.push(resolve(dirname(file), specifier));
      else seen.add(specifier);
    }
  }
  return new Set([...seen].map((name) => (name.startsWith(ROOT) ? name.slice(ROOT.length) : name)));
}

describe("the api process's footprint", () => {
  it.each(["src/main.ts", "src/api/main.ts"])("%s reaches no simulator and no Kubernetes client", (entry) => {
    const modules = [...reachable(entry)];
    expect(modules.filter((name) => name.startsWith("src/sim/") || name.startsWith("src/kube/") || name.startsWith("src/local-cluster/"))).toEqual([]);
    expect(modules.filter((name) => name.startsWith("@kubernetes/") || name.startsWith("kubernetes-models") || name.startsWith("@kubernetes-models/"))).toEqual([]);
    // The launcher reaches the simulator only through a child process's entry file.
    expect(modules).toContain(entry === "src/main.ts" ? "src/launch/local-cluster-process.ts" : "src/api/server.ts");
  });

  it("finds what it looks for (the supervisor does load a Kubernetes client)", () => {
    expect([...reachable("src/supervisor/main.ts")]).toContain("@kubernetes/client-node");
    expect([...reachable(join("src", "launch", "local-cluster-main.ts"))]).toContain("src/sim/index.ts");
  });
});

/**
 * A module hook registered after tsx's (so it sees every URL first) that appends each module
 * URL the process loads to the file named by LOADED_MODULES_FILE.
 */
const RECORDER = `data:text/javascript,${encodeURIComponent(`
import { register } from "node:module";
register("data:text/javascript," + encodeURIComponent(\`
import { appendFileSync } from "node:fs";
export async function load(url, context, next) {
  appendFileSync(process.env.LOADED_MODULES_FILE, url + "\\\\n");
  return next(url, context);
}\`));
`)}`;

describe("the running api process's footprint", () => {
  it.each([
    ["no cluster configured", {}],
    ["a cluster configured", { KUBECONFIG: "/nonexistent/kubeconfig", RUNNER_NAMESPACE: "telo-sessions" }],
  ])("loads no simulator and no Kubernetes client, with %s, after serving requests", async (_label, extraEnv: Record<string, string>) => {
    const dir = await mkdtemp(join(tmpdir(), "k8s-runner-footprint-"));
    const record = join(dir, "modules.txt");
    const port = await freePort();
    let api: ChildProcess | undefined;
    try {
      api = spawn(process.execPath, ["--import", "tsx", "--import", RECORDER, join(ROOT, "src/api/main.ts")], {
        cwd: ROOT,
        env: {
          PATH: process.env.PATH ?? "",
          HOME: process.env.HOME ?? "/tmp",
          LOG_LEVEL: "warn",
          PORT: String(port),
          RUNNER_INTERNAL_SOCKET: join(dir, "supervisor.sock"),
          RUNNER_CONSOLE: "true",
          LOADED_MODULES_FILE: record,
          ...extraEnv,
        },
        stdio: ["ignore", "ignore", "ignore"],
      });
      const base = `http://127.0.0.1:${port}`;
      await waitFor("the api to answer", async () => (await fetch(`${base}/v1/health`).catch(() => undefined))?.ok, 30_000);
      // Routes that load what they need on first use; without a supervisor the relayed ones answer 503.
      for (const path of ["/v1/openapi.json", "/metrics", "/console", "/v1/sessions/none", "/v1/sessions/none/events"]) await (await fetch(base + path)).arrayBuffer();
      expect((await fetch(`${base}/v1/sessions`, { method: "POST", headers: { "content-type": "application/json" }, body: "{}" })).status).toBeGreaterThanOrEqual(400);
      const loaded = (await readFile(record, "utf8")).split("\n").filter(Boolean).map((url) => (url.startsWith("file://") ? fileURLToPath(url) : url));
      const project = loaded.filter((path) => path.startsWith(ROOT)).map((path) => path.slice(ROOT.length));
      // Packages are seen too (hono is what the api serves with).
      expect(project).toContain("src/api/server.ts");
      expect(project.some((path) => path.startsWith("node_modules/hono/"))).toBe(true);
      expect(project.filter((path) => /^src\/(sim|kube)\/|^src\/local-cluster\.ts$/.test(path))).toEqual([]);
      expect(project.filter((path) => /^node_modules\/(@kubernetes\/|kubernetes-models|@kubernetes-models\/)/.test(path))).toEqual([]);
      // No exporter configured: the OpenTelemetry SDK is never loaded, only its API (docs/tracing.md).
      expect(project.some((path) => path.startsWith("node_modules/@opentelemetry/api/"))).toBe(true);
      expect(project.filter((path) => /^node_modules\/@opentelemetry\/(?!api\/)/.test(path) || path === "src/launch/tracing-sdk.ts")).toEqual([]);
    } finally {
      await stopChild(api, "SIGKILL");
      await rm(dir, { recursive: true, force: true });
    }
  });
});
