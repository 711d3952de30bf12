/**
 * Every object a builder (src/kube/specs) can produce, in every combination of its options: the
 * one enumeration the schema and Pod Security checks (admission-matrix.test.ts) and the
 * server-side dry runs on both clusters (test/kube-e2e/dry-run.test.ts) walk.
 */
import type { CatalogEntry } from "../../../src/config/apps-catalog.ts";
import type { SessionPodSettings } from "../../../src/config/kube.ts";
import type { PortMapping, ResolvedApp } from "../../../src/contract/wire.ts";
import { appPod } from "../../../src/kube/specs/app-pod.ts";
import { buildJob } from "../../../src/kube/specs/build-job.ts";
import { sessionHttpRoutes } from "../../../src/kube/specs/http-route.ts";
import { sessionIngress } from "../../../src/kube/specs/ingress.ts";
import { poolPod } from "../../../src/kube/specs/pool-pod.ts";
import { runPod } from "../../../src/kube/specs/run-pod.ts";
import { sessionService } from "../../../src/kube/specs/session-service.ts";
import { watchPod } from "../../../src/kube/specs/watch-pod.ts";
import { workspaceConfigMap } from "../../../src/kube/specs/workspace-configmap.ts";
import { APP_LIMITS, CREATED_AT, FULL_SETTINGS, PLAIN_SETTINGS, RUN_LIMITS, runSession, SESSION_ID } from "../fixtures.ts";

/** One built object: which builder, in which configuration, and the namespace it goes to. */
export interface BuiltObject {
  builder: "run pod" | "pool pod" | "app pod" | "watch pod" | "build Job" | "Service" | "Ingress" | "HTTPRoute" | "workspace ConfigMap";
  label: string;
  namespace: string;
  object: { apiVersion?: string; kind?: string; metadata?: { name?: string } };
}

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

const CONFIGS = { "default image": {}, "picked image, always": { image: "telorun/node:0.14.0", pullPolicy: "always" as const } };
const BUILT = { "kernel image": undefined, "built image": `registry.example.com/telo-sessions:${"0".repeat(32)}` };
const label = (combination: Record<string, unknown>) => Object.values(combination).join(", ");

const APP_SETS: Record<string, ResolvedApp[]> = {
  "one tty app": [{ name: "app", entryRelativePath: "telo.yaml", ports: [], io: "tty" }],
  "three apps, mixed io and ports": [
    { name: "api", entryRelativePath: "api/telo.yaml", ports: PORT_SETS.tcp!, io: "tty" },
    { name: "dns", entryRelativePath: "dns/telo.yaml", ports: PORT_SETS["tcp+udp on one number"]!, io: "streams" },
    { name: "worker", entryRelativePath: "worker/telo.yaml", ports: [], io: "streams" },
  ],
};
const AGENTS: Record<string, CatalogEntry | undefined> = {
  "no agent": undefined,
  "agent with a port": { name: "claude", image: "ghcr.io/acme/agent:2.0.0", env: { KEY: "v" }, pullPolicy: "always", port: 7681 },
  "agent without a port": { name: "helper", image: "ghcr.io/acme/helper:1", env: {}, pullPolicy: "missing" },
};

/**
 * `runtimeClass` is the class the "pull secret + runtime class" settings name: a real apiserver
 * refuses pods naming a RuntimeClass it does not have, so a cluster passes one it has.
 */
export function builtObjects(options: { runtimeClass?: string } = {}): BuiltObject[] {
  const full: SessionPodSettings = { ...FULL_SETTINGS, ...(options.runtimeClass && { runtimeClass: options.runtimeClass }) };
  const settings = { plain: PLAIN_SETTINGS, "pull secret + runtime class": full };
  const objects: BuiltObject[] = [];
  const sessions = PLAIN_SETTINGS.namespace;

  for (const c of combinations({ settings: Object.keys(settings), config: Object.keys(CONFIGS), inspect: [false, true], ports: Object.keys(PORT_SETS), built: Object.keys(BUILT) })) {
    const builtImage = BUILT[c.built as keyof typeof BUILT];
    const object = runPod({
      session: runSession({
        inspect: c.inspect,
        config: CONFIGS[c.config as keyof typeof CONFIGS],
        apps: [{ name: "app", entryRelativePath: "telo.yaml", ports: PORT_SETS[c.ports]!, io: "tty" }],
      }),
      env: { GREETING: "hello" },
      settings: settings[c.settings as keyof typeof settings],
      limits: RUN_LIMITS,
      defaultImage: "telorun/node:latest-slim",
      ...(builtImage && { builtImage }),
      bundleUrl: `http://runner:8063/internal/bundles/${SESSION_ID}?token=${"a".repeat(48)}`,
    });
    objects.push({ builder: "run pod", label: label(c), namespace: sessions, object });
  }

  for (const c of combinations({ settings: Object.keys(settings) })) {
    const object = poolPod({
      name: "telo-pool-0123456789ab",
      settings: settings[c.settings as keyof typeof settings],
      limits: RUN_LIMITS,
      defaultImage: "telorun/node:latest-slim",
      claimUrl: `http://runner:8063/internal/pool/telo-pool-0123456789ab?token=${"c".repeat(48)}`,
      maxIdleSeconds: 600,
    });
    objects.push({ builder: "pool pod", label: label(c), namespace: sessions, object });
  }

  for (const c of combinations({ settings: Object.keys(settings), config: Object.keys(CONFIGS), ports: Object.keys(PORT_SETS) })) {
    const object = appPod({
      session: runSession({
        selfContained: true,
        config: CONFIGS[c.config as keyof typeof CONFIGS],
        apps: [{ name: "app", entryRelativePath: "telo.yaml", ports: PORT_SETS[c.ports]!, io: "tty" }],
      }),
      env: { TOKEN: "operator-value" },
      settings: settings[c.settings as keyof typeof settings],
      limits: APP_LIMITS,
      defaultImage: "telorun/node:latest-slim",
    });
    objects.push({ builder: "app pod", label: label(c), namespace: sessions, object });
  }

  for (const c of combinations({ settings: Object.keys(settings), config: Object.keys(CONFIGS), apps: Object.keys(APP_SETS), agent: Object.keys(AGENTS) })) {
    const agent = AGENTS[c.agent];
    const object = watchPod({
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
      settings: settings[c.settings as keyof typeof settings],
      limits: APP_LIMITS,
      ttlSeconds: 21600,
      defaultImage: "telorun/node:latest-slim",
      nameSuffix: "mihq0x2o1",
      workspaceConfigMap: "telo-workspace-app-0123456789ab",
      ...(agent && { agent }),
    });
    objects.push({ builder: "watch pod", label: label(c), namespace: sessions, object });
  }

  for (const c of combinations({ pushSecret: [undefined, "registry-push"], insecureRegistry: [false, true] })) {
    const object = buildJob({
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
      ownerId: "default",
      initImage: "busybox:stable",
      tag: "0".repeat(32),
      contextUrl: `http://runner:8063/internal/bundles/build-${"0".repeat(32)}?token=${"a".repeat(48)}`,
    });
    objects.push({ builder: "build Job", label: label(c), namespace: "telo-builds", object });
  }

  const owner = { name: `telo-run-${SESSION_ID}`, uid: "5f0c7a52-1d2e-4a8b-9c3d-0e1f2a3b4c5d" };
  const common = { sessionId: SESSION_ID, namespace: sessions, managedBy: "telo-k8s-runner", ownerId: "default", owner };
  for (const c of combinations({ ports: Object.keys(PORT_SETS), ingressClass: [undefined, "nginx"], tlsSecret: [undefined, "session-tls"], sectionName: [undefined, "https"] })) {
    const ports = PORT_SETS[c.ports]!;
    // The runner publishes a Service only for a session with ports (a real apiserver refuses one without).
    if (ports.length > 0) objects.push({ builder: "Service", label: label(c), namespace: sessions, object: sessionService({ ...common, ports }) });
    const ingress = sessionIngress({
      ...common,
      ports,
      baseDomain: "run.example.com",
      ...(c.ingressClass && { ingressClass: c.ingressClass }),
      ...(c.tlsSecret && { tlsSecret: c.tlsSecret }),
    });
    if (ingress) objects.push({ builder: "Ingress", label: label(c), namespace: sessions, object: ingress });
    const gateway = { name: "public", namespace: "gateways", ...(c.sectionName && { sectionName: c.sectionName }) };
    for (const route of sessionHttpRoutes({ ...common, ports, baseDomain: "run.example.com", version: "v1", gateway })) {
      objects.push({ builder: "HTTPRoute", label: label(c), namespace: sessions, object: route });
    }
  }

  objects.push({
    builder: "workspace ConfigMap",
    label: "one manifest",
    namespace: sessions,
    object: workspaceConfigMap({ manifest: "kind: Telo.Application\n", namespace: sessions, managedBy: "telo-k8s-runner", ownerId: "default" }),
  });
  return objects;
}
