/**
 * The pure parts of watch sessions: what a `Kernel.PortsResolved` frame declares (docs/api.md
 * "Debug and port events"), the `endpoints` report of a port change (docs/kubernetes.md
 * "Services and routes"), the simulator annotations a watch pod gets, and the shipped
 * workspace-app manifest (docs/api.md "Watch sessions").
 */
import { describe, expect, it } from "vitest";
import { simulatedBehaviourAnnotations } from "../../../src/local-cluster/simulated-behaviour.ts";
import { workspaceConfigMapName } from "../../../src/kube/specs/names.ts";
import { declaredPorts, endpointReport } from "../../../src/kube/session/declared-ports.ts";
import { WORKSPACE_APP_MANIFEST } from "../../../src/kube/workspace-app/manifest.ts";
import { parse } from "yaml";

describe("declaredPorts", () => {
  it("reads Kernel.PortsResolved: integer ports only, udp when it says so, tcp otherwise", () => {
    const frame = {
      kind: "event",
      event: "Kernel.PortsResolved",
      payload: { ports: [{ port: 3000 }, { port: 53, protocol: "udp" }, { port: 8080, protocol: "sctp" }, { port: 1.5 }, { port: "80" }, { port: 70000 }] },
    };
    expect(declaredPorts(frame)).toEqual([
      { port: 3000, protocol: "tcp" },
      { port: 53, protocol: "udp" },
      { port: 8080, protocol: "tcp" },
    ]);
  });

  it("ignores every other frame and a payload without a port list", () => {
    expect(declaredPorts({ kind: "event", event: "Kernel.Started", payload: { ports: [{ port: 1 }] } })).toBeUndefined();
    expect(declaredPorts({ kind: "event", event: "Kernel.PortsResolved", payload: {} })).toBeUndefined();
    expect(declaredPorts({ kind: "event", event: "Kernel.PortsResolved", payload: { ports: [] } })).toEqual([]);
  });
});

describe("endpointReport", () => {
  const routed = { sessionId: "k7m3qx4r2abc", baseDomain: "sessions.example.com", routed: true };

  it("lists added and removed endpoints with their URLs and passes rejections on", () => {
    const change = {
      ports: [{ port: 3001, protocol: "tcp" as const }],
      added: [{ port: 3001, protocol: "tcp" as const }],
      removed: [{ port: 3000, protocol: "tcp" as const }],
      rejected: [{ port: 7000, reason: "this session's co-resident agent 'helper' listens on tcp port 7000" }],
    };
    expect(endpointReport(change, routed)).toEqual({
      added: [{ host: "3001-k7m3qx4r2abc.sessions.example.com", port: 3001, protocol: "tcp", url: "https://3001-k7m3qx4r2abc.sessions.example.com" }],
      removed: [{ host: "3000-k7m3qx4r2abc.sessions.example.com", port: 3000, protocol: "tcp", url: "https://3000-k7m3qx4r2abc.sessions.example.com" }],
      rejected: change.rejected,
    });
  });

  it("leaves out empty lists", () => {
    const change = { ports: [], added: [], removed: [{ port: 9000, protocol: "udp" as const }], rejected: [] };
    expect(endpointReport(change, { ...routed, routed: false })).toEqual({ removed: [{ host: "", port: 9000, protocol: "udp" }] });
  });
});

describe("simulated behaviour of a watch pod", () => {
  const apps = [
    { name: "web", entryRelativePath: "web/telo.yaml", ports: [], io: "tty" as const },
    { name: "worker", entryRelativePath: "worker/telo.yaml", ports: [], io: "streams" as const },
  ];
  const config = { image: "telorun/node:latest-slim", pullPolicy: "missing" as const, simulate: { listen: true, "exit-code.app-worker": 3 } };

  it("gives a plain key to every app container, never the workspace container, and a qualified key as it is", () => {
    expect(simulatedBehaviourAnnotations({ mode: "watch", apps, config })).toEqual({
      "sim.k8s-runner.dev/listen.app-web": "true",
      "sim.k8s-runner.dev/listen.app-worker": "true",
      "sim.k8s-runner.dev/exit-code.app-worker": "3",
    });
  });

  it("tells each application container its declared ports, as a kernel reads them from its manifest; a simulate key wins", () => {
    const ported = [
      { name: "web", entryRelativePath: "web/telo.yaml", ports: [{ port: 3000, protocol: "tcp" as const }, { port: 5353, protocol: "udp" as const }], io: "tty" as const },
      { name: "worker", entryRelativePath: "worker/telo.yaml", ports: [], io: "streams" as const },
    ];
    expect(simulatedBehaviourAnnotations({ mode: "watch", apps: ported, config: { image: "telorun/node:latest-slim", pullPolicy: "missing" } })).toEqual({ "sim.k8s-runner.dev/listen-ports.app-web": "3000/tcp,5353/udp" });
    expect(simulatedBehaviourAnnotations({ mode: "run", apps: ported.slice(0, 1), config: { image: "telorun/node:latest-slim", pullPolicy: "missing", simulate: { "listen-ports": "" } } })).toEqual({ "sim.k8s-runner.dev/listen-ports.session": "" });
  });

  it("keeps a run pod's plain keys on its session container", () => {
    expect(simulatedBehaviourAnnotations({ mode: "run", apps: apps.slice(0, 1), config })).toEqual({
      "sim.k8s-runner.dev/listen.session": "true",
      "sim.k8s-runner.dev/exit-code.app-worker": "3",
    });
  });
});

describe("the workspace-app manifest", () => {
  it("is the TeloWorkspace application serving the four workspace routes on PORT (default 8099)", () => {
    const [application, ...resources] = WORKSPACE_APP_MANIFEST.split(/^---$/m).map((document) => parse(document, { customTags: celTags }));
    expect(application).toMatchObject({
      kind: "Telo.Application",
      metadata: { name: "TeloWorkspace" },
      ports: { http: { env: "PORT", default: 8099 } },
      variables: { workspaceDir: { env: "WORKSPACE_DIR", default: "/workspace" }, exclude: { env: "WORKSPACE_EXCLUDE", default: ["node_modules", ".telo", ".git"] } },
    });
    expect(Object.keys(application.imports).sort()).toEqual(["Fs", "Http", "Run"]);
    const api = resources.find((resource) => resource.kind === "Http.Api");
    expect(api.routes.map((route: { request: { method: string; path: string } }) => `${route.request.method} ${route.request.path}`)).toEqual([
      "GET /workspace",
      "POST /workspace",
      "GET /workspace/file",
      "GET /workspace/snapshot",
    ]);
  });

  it("names its ConfigMap by the first 12 hex characters of its sha256", () => {
    expect(workspaceConfigMapName(WORKSPACE_APP_MANIFEST, "default")).toMatch(/^telo-workspace-app-[0-9a-f]{12}$/);
  });
});

/** Telo's `!ref` and `!cel` tags, read as plain values: the test checks the shape, not the expressions. */
const celTags = ["!ref", "!cel"].map((tag) => ({ tag, resolve: (value: string) => value }));
