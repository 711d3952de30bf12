/**
 * Every object a builder can produce, in every combination of its options, is valid against the
 * official schema and admitted by the Pod Security level of the namespace it goes to
 * (`restricted` for sessions, `baseline` for builds).
 */
import { describe, expect, it } from "vitest";
import type { PortMapping, ResolvedApp } from "../../../src/contract/wire.ts";
import { appPod } from "../../../src/kube/specs/app-pod.ts";
import { buildJob } from "../../../src/kube/specs/build-job.ts";
import { sessionHttpRoutes } from "../../../src/kube/specs/http-route.ts";
import { sessionIngress } from "../../../src/kube/specs/ingress.ts";
import { runPod } from "../../../src/kube/specs/run-pod.ts";
import { sessionService } from "../../../src/kube/specs/service.ts";
import { watchPod, type AgentEntry } from "../../../src/kube/specs/watch-pod.ts";
import { workspaceConfigMap } from "../../../src/kube/specs/workspace-configmap.ts";
import {
  APP_LIMITS,
  CREATED_AT,
  expectAdmitted,
  expectSchemaValid,
  FULL_SETTINGS,
  PLAIN_SETTINGS,
  RUN_LIMITS,
  runSession,
  SESSION_ID,
} from "../fixtures.ts";

/** Every combination of the given option values, as objects. */
function combinations<T extends Record<string, readonly unknown[]>>(options: T): Array<{ [K in keyof T]: T[K][number] }> {
  return Object.entries(options).reduce<Array<Record<string, unknown>>>(
    (partial, [key, values]) => partial.flatMap((combination) => values.map((value) => ({ ...combination, [key]: value }))),
    [{}],
  ) as Array<{ [K in keyof T]: T[K][number] }>;
}

const PORT_SETS: Record<string, PortMapping[]> = {
  none: [],
  tcp: [{ port: 8080, protocol: "tcp" }],
  udp: [{ port: 5353, protocol: "udp" }],
  "tcp+udp on one number": [
    { port: 53, protocol: "tcp" },
    { port: 53, protocol: "udp" },
  ],
};

const SETTINGS = { plain: PLAIN_SETTINGS, "pull secret + runtime class": FULL_SETTINGS };
const CONFIGS = { "default image": {}, "picked image, always": { image: "telorun/node:0.14.0", pullPolicy: "always" as const } };
const BUILT = { "kernel image": undefined, "built image": `registry.example.com/telo-sessions:${"0".repeat(32)}` };
const label = (combination: Record<string, unknown>) => Object.values(combination).join(", ");

describe("run pods", () => {
  const matrix = combinations({
    settings: Object.keys(SETTINGS),
    config: Object.keys(CONFIGS),
    inspect: [false, true],
    ports: Object.keys(PORT_SETS),
    built: Object.keys(BUILT),
  });
  it.each(matrix.map((c) => [label(c), c] as const))("%s", (_, c) => {
    const pod = runPod({
      session: runSession({
        inspect: c.inspect,
        config: CONFIGS[c.config as keyof typeof CONFIGS],
        apps: [{ name: "app", entryRelativePath: "telo.yaml", ports: PORT_SETS[c.ports]!, io: "tty" }],
      }),
      env: { GREETING: "hello" },
      settings: SETTINGS[c.settings as keyof typeof SETTINGS],
      limits: RUN_LIMITS,
      defaultImage: "telorun/node:latest-slim",
      ...(BUILT[c.built as keyof typeof BUILT] && { builtImage: BUILT[c.built as keyof typeof BUILT] }),
      bundleUrl: `http://runner:8063/internal/bundles/${SESSION_ID}?token=${"a".repeat(48)}`,
    });
    expectSchemaValid(pod);
    expectAdmitted("restricted", pod);
  });
});

describe("app pods", () => {
  const matrix = combinations({ settings: Object.keys(SETTINGS), config: Object.keys(CONFIGS), ports: Object.keys(PORT_SETS) });
  it.each(matrix.map((c) => [label(c), c] as const))("%s", (_, c) => {
    const pod = appPod({
      session: runSession({
        selfContained: true,
        config: CONFIGS[c.config as keyof typeof CONFIGS],
        apps: [{ name: "app", entryRelativePath: "telo.yaml", ports: PORT_SETS[c.ports]!, io: "tty" }],
      }),
      env: { TOKEN: "operator-value" },
      settings: SETTINGS[c.settings as keyof typeof SETTINGS],
      limits: APP_LIMITS,
      defaultImage: "telorun/node:latest-slim",
    });
    expectSchemaValid(pod);
    expectAdmitted("restricted", pod);
  });
});

describe("watch pods", () => {
  const APP_SETS: Record<string, ResolvedApp[]> = {
    "one tty app": [{ name: "app", entryRelativePath: "telo.yaml", ports: [], io: "tty" }],
    "three apps, mixed io and ports": [
      { name: "api", entryRelativePath: "api/telo.yaml", ports: PORT_SETS.tcp!, io: "tty" },
      { name: "dns", entryRelativePath: "dns/telo.yaml", ports: PORT_SETS["tcp+udp on one number"]!, io: "streams" },
      { name: "worker", entryRelativePath: "worker/telo.yaml", ports: [], io: "streams" },
    ],
  };
  const AGENTS: Record<string, AgentEntry | undefined> = {
    "no agent": undefined,
    "agent with a port": { name: "claude", image: "ghcr.io/acme/agent:2.0.0", env: { KEY: "v" }, pullPolicy: "always", port: 7681 },
    "agent without a port": { name: "helper", image: "ghcr.io/acme/helper:1", env: {} },
  };
  const matrix = combinations({
    settings: Object.keys(SETTINGS),
    config: Object.keys(CONFIGS),
    apps: Object.keys(APP_SETS),
    agent: Object.keys(AGENTS),
  });
  it.each(matrix.map((c) => [label(c), c] as const))("%s", (_, c) => {
    const agent = AGENTS[c.agent];
    const pod = watchPod({
      session: {
        sessionId: SESSION_ID,
        mode: "watch",
        createdAt: CREATED_AT,
        apps: APP_SETS[c.apps]!,
        inspect: true,
        selfContained: false,
        config: CONFIGS[c.config as keyof typeof CONFIGS],
      },
      env: { GREETING: "hello" },
      settings: SETTINGS[c.settings as keyof typeof SETTINGS],
      limits: APP_LIMITS,
      ttlSeconds: 21600,
      defaultImage: "telorun/node:latest-slim",
      nameSuffix: "mihq0x2o1",
      workspaceConfigMap: "telo-workspace-app-0123456789ab",
      ...(agent && { agent }),
    });
    expectSchemaValid(pod);
    expectAdmitted("restricted", pod);
  });
});

describe("build Job pods", () => {
  const matrix = combinations({ pushSecret: [undefined, "registry-push"], insecureRegistry: [false, true] });
  it.each(matrix.map((c) => [label(c), c] as const))("%s", (_, c) => {
    const job = buildJob({
      build: {
        repository: "registry.example.com/telo-sessions",
        namespace: "telo-builds",
        builderImage: "gcr.io/kaniko-project/executor:latest",
        timeoutSeconds: 600,
        insecureRegistry: c.insecureRegistry,
        registryApiUrl: undefined,
        pushSecret: c.pushSecret,
      },
      managedBy: "telo-k8s-runner",
      initImage: "busybox:stable",
      tag: "0".repeat(32),
      contextUrl: `http://runner:8063/internal/bundles/build-${"0".repeat(32)}?token=${"a".repeat(48)}`,
    });
    expectSchemaValid(job);
    expectAdmitted("baseline", { metadata: job.metadata, spec: job.spec?.template.spec });
  });
});

describe("routing objects and the workspace ConfigMap", () => {
  const owner = { name: `telo-run-${SESSION_ID}`, uid: "5f0c7a52-1d2e-4a8b-9c3d-0e1f2a3b4c5d" };
  const common = { sessionId: SESSION_ID, namespace: "telo-sessions", managedBy: "telo-k8s-runner", owner };
  const matrix = combinations({
    ports: Object.keys(PORT_SETS),
    ingressClass: [undefined, "nginx"],
    tlsSecret: [undefined, "session-tls"],
    sectionName: [undefined, "https"],
  });
  it.each(matrix.map((c) => [label(c), c] as const))("%s", (_, c) => {
    const ports = PORT_SETS[c.ports]!;
    expectSchemaValid(sessionService({ ...common, ports }));
    const ingress = sessionIngress({
      ...common,
      ports,
      baseDomain: "run.example.com",
      ...(c.ingressClass && { ingressClass: c.ingressClass }),
      ...(c.tlsSecret && { tlsSecret: c.tlsSecret }),
    });
    if (ingress) expectSchemaValid(ingress);
    else expect(ports.some((p) => p.protocol === "tcp")).toBe(false);
    for (const route of sessionHttpRoutes({
      ...common,
      ports,
      baseDomain: "run.example.com",
      version: "v1",
      gateway: { name: "public", namespace: "gateways", ...(c.sectionName && { sectionName: c.sectionName }) },
    })) {
      expectSchemaValid(route);
    }
  });

  it("workspace ConfigMap", () => {
    expectSchemaValid(workspaceConfigMap({ manifest: "kind: Telo.Application\n", namespace: "telo-sessions", managedBy: "telo-k8s-runner" }));
  });
});
