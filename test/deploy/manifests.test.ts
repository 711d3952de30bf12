import { execFileSync } from "node:child_process";
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join, relative } from "node:path";
import { parseAllDocuments } from "yaml";
import { describe, expect, it } from "vitest";
import { loadCoreConfig } from "../../src/config/core.ts";
import { loadKubeConfig } from "../../src/config/kube.ts";
import { replicaSettings } from "../../src/config/replicas.ts";
import { appPod } from "../../src/kube/specs/app-pod.ts";
import { buildJob } from "../../src/kube/specs/build-job.ts";
import type { SessionFacts } from "../../src/kube/specs/pod-common.ts";
import { runPod } from "../../src/kube/specs/run-pod.ts";
import { watchPod } from "../../src/kube/specs/watch-pod.ts";
import { cpuMillicores, quantityBytes } from "../../src/kube/specs/limits.ts";
import { enforcedLevel, podSecurityViolations, type PodLike } from "../../src/sim/admission/pod-security.ts";
import { validateAgainstSchema } from "../../src/sim/admission/schema.ts";
import { nodeCommand } from "../../src/launch/node-runtime.ts";
import {
  containerEnv,
  envValue,
  find,
  one,
  OVERLAYS,
  REPO_ROOT,
  render,
  runnerDeployment,
  SAMPLE_POD,
  TARGETS,
  type K8sObject,
} from "./render.ts";

const RUNNER_NS = "telo-runner";
const SESSION_NS = "telo-sessions";
const BUILD_NS = "telo-builds";
const NAME = "telo-k8s-runner";
const STATIC_LABELS = {
  "app.kubernetes.io/name": NAME,
  "app.kubernetes.io/instance": NAME,
  "app.kubernetes.io/managed-by": "kustomize",
};
const HARDENED_CONTAINER = {
  allowPrivilegeEscalation: false,
  readOnlyRootFilesystem: true,
  runAsNonRoot: true,
  capabilities: { drop: ["ALL"] },
};

type NetworkPolicyPeer = {
  namespaceSelector?: { matchLabels?: Record<string, string> };
  podSelector?: { matchLabels?: Record<string, string> };
  ipBlock?: { cidr: string; except?: string[] };
};
type NetworkPolicy = K8sObject & {
  spec: {
    podSelector: { matchLabels: Record<string, string> };
    policyTypes: string[];
    ingress?: Array<{ from?: NetworkPolicyPeer[]; ports?: Array<{ port: number; protocol: string }> }>;
    egress?: Array<{ to?: NetworkPolicyPeer[]; ports?: Array<{ port: number; protocol: string }> }>;
  };
};

/** The env the runner's processes see, as a plain record (what process.env would hold). */
function runnerEnv(objects: K8sObject[]): Record<string, string> {
  const env: Record<string, string> = {};
  for (const [name, variable] of containerEnv(objects, runnerDeployment(objects).spec.template.spec.containers[0]!)) {
    if (variable.value !== undefined) env[name] = variable.value;
    const ref = variable.valueFrom?.secretKeyRef;
    if (ref) {
      const secret = one(objects, "Secret", ref.name) as K8sObject & { data: Record<string, string> };
      env[name] = Buffer.from(secret.data[ref.key]!, "base64").toString("utf8");
    }
  }
  return env;
}

function namespaceLevel(objects: K8sObject[], namespace: string) {
  return enforcedLevel(one(objects, "Namespace", namespace).metadata.labels);
}

describe.each(TARGETS)("k8s/%s", (target) => {
  const objects = render(target);

  it("renders only objects that are valid against the official schemas", () => {
    expect(objects.length).toBeGreaterThan(10);
    for (const obj of objects) {
      expect({ object: `${obj.kind}/${obj.metadata.name}`, causes: validateAgainstSchema(obj) }).toEqual({
        object: `${obj.kind}/${obj.metadata.name}`,
        causes: [],
      });
    }
  });

  it("labels every object with the static labels and keeps selectors to the name label", () => {
    for (const obj of objects) expect(obj.metadata.labels).toMatchObject(STATIC_LABELS);
    const deployment = runnerDeployment(objects);
    expect(deployment.spec.selector.matchLabels).toEqual({ "app.kubernetes.io/name": NAME });
    const service = one(objects, "Service", NAME) as K8sObject & { spec: { selector: Record<string, string> } };
    expect(service.spec.selector).toEqual({ "app.kubernetes.io/name": NAME });
  });

  it("puts every namespaced object in a namespace it creates, with its Pod Security level", () => {
    const namespaces = find(objects, "Namespace").map((n) => n.metadata.name);
    const clusterScoped = new Set(["Namespace", "ClusterRole", "ClusterRoleBinding"]);
    for (const obj of objects) {
      if (clusterScoped.has(obj.kind)) expect(obj.metadata.namespace).toBeUndefined();
      else expect(namespaces).toContain(obj.metadata.namespace);
    }
    for (const ns of find(objects, "Namespace")) {
      const expected = ns.metadata.name === BUILD_NS ? "baseline" : "restricted";
      expect(ns.metadata.labels).toMatchObject({
        "pod-security.kubernetes.io/enforce": expected,
        "pod-security.kubernetes.io/warn": expected,
      });
    }
  });

  it("runs the runner pod within its namespace's Pod Security level", () => {
    const deployment = runnerDeployment(objects);
    const level = namespaceLevel(objects, deployment.metadata.namespace!);
    expect(level).toBe("restricted");
    expect(podSecurityViolations(level, deployment.spec.template as PodLike)).toEqual([]);
  });
});

describe.each(OVERLAYS)("overlay %s", (overlay) => {
  const objects = render(`overlays/${overlay}`);
  const deployment = runnerDeployment(objects);
  const pod = deployment.spec.template.spec;
  const env = runnerEnv(objects);
  const config = loadKubeConfig(env);

  it("runs three replicas, rolled one at a time with none down, spread across nodes and held by a disruption budget", () => {
    expect(deployment.spec.replicas).toBe(3);
    expect(deployment.spec.strategy).toEqual({ type: "RollingUpdate", rollingUpdate: { maxUnavailable: 0, maxSurge: 1 } });
    const spread = (pod as { affinity?: { podAntiAffinity?: { preferredDuringSchedulingIgnoredDuringExecution?: Array<{ podAffinityTerm: { topologyKey: string; labelSelector: unknown } }> } } }).affinity;
    expect(spread?.podAntiAffinity?.preferredDuringSchedulingIgnoredDuringExecution?.[0]?.podAffinityTerm).toEqual({
      topologyKey: "kubernetes.io/hostname",
      labelSelector: { matchLabels: { "app.kubernetes.io/name": NAME } },
    });
    const budget = one(objects, "PodDisruptionBudget", NAME) as K8sObject & { spec: unknown };
    expect(budget.spec).toEqual({ maxUnavailable: 1, selector: { matchLabels: { "app.kubernetes.io/name": NAME } } });
  });

  it("makes each pod a replica named after itself, reachable by the others on its peer port", () => {
    // The terms file is mounted in the pod, not here: only the replica settings are read.
    const core = loadCoreConfig({ ...env, RUNNER_TERMS_FILE: undefined });
    const replicas = replicaSettings(core.replicas, core.peer);
    expect(replicas).toMatchObject({ identity: SAMPLE_POD["metadata.name"], peerAddress: `${SAMPLE_POD["status.podIP"]}:8065` });
    const [, supervisor] = pod.containers;
    expect(supervisor!.ports).toContainEqual({ name: "peer", containerPort: 8065, protocol: "TCP" });
  });

  it("runs the api and the supervisor as two hardened containers of one image, same uid", () => {
    expect(pod.serviceAccountName).toBe(NAME);
    expect(pod).toMatchObject({ enableServiceLinks: false });
    expect(pod.securityContext).toEqual({
      runAsNonRoot: true,
      runAsUser: 1000,
      runAsGroup: 1000,
      fsGroup: 1000,
      seccompProfile: { type: "RuntimeDefault" },
    });
    expect(pod.initContainers).toBeUndefined();
    const [api, supervisor] = pod.containers;
    expect(pod.containers.map((c) => c.name)).toEqual(["api", "supervisor"]);
    // Node's memory settings (src/launch/node-runtime.ts) on both command lines.
    expect(api!.command).toEqual(nodeCommand("dist/src/api/main.js"));
    expect(supervisor!.command).toEqual(nodeCommand("dist/src/supervisor/main.js"));
    const version = (JSON.parse(readFileSync(join(REPO_ROOT, "package.json"), "utf8")) as { version: string }).version;
    for (const c of pod.containers) {
      expect(c.image).toBe(`telorun/k8s-runner:${version}`);
      expect(c.securityContext).toEqual(HARDENED_CONTAINER);
      expect(c.resources?.requests).toEqual(expect.objectContaining({ cpu: expect.any(String), memory: expect.any(String) }));
      expect(c.resources?.limits).toEqual(expect.objectContaining({ cpu: expect.any(String), memory: expect.any(String) }));
      // the same uid for both: nothing overrides the pod-level user or group
      expect(c.securityContext).not.toHaveProperty("runAsUser");
      expect(c.securityContext).not.toHaveProperty("runAsGroup");
      // a writable /tmp under the read-only root filesystem
      const tmp = c.volumeMounts?.find((m) => m.mountPath === "/tmp");
      expect(pod.volumes?.find((v) => v.name === tmp?.name)?.emptyDir).toBeDefined();
    }
  });

  it("shares the internal socket through an in-memory emptyDir mounted in both containers", () => {
    const socket = env.RUNNER_INTERNAL_SOCKET!;
    expect(socket).toMatch(/^\/.+\.sock$/);
    const dir = socket.slice(0, socket.lastIndexOf("/"));
    const mounts = pod.containers.map((c) => c.volumeMounts?.find((m) => m.mountPath === dir));
    expect(mounts.every((m) => m !== undefined && m.name === mounts[0]!.name && !m.readOnly)).toBe(true);
    const volume = pod.volumes?.find((v) => v.name === mounts[0]!.name);
    expect(volume?.emptyDir?.medium).toBe("Memory");
    // both containers read the same configuration
    const [apiEnv, supervisorEnv] = pod.containers.map((c) => containerEnv(objects, c));
    expect([...apiEnv!.keys()].sort()).toEqual([...supervisorEnv!.keys()].sort());
  });

  it("probes the api's readiness on /v1/ready and liveness on /v1/health, the supervisor on its bundle listener's /healthz", () => {
    const [api, supervisor] = pod.containers;
    const portOf = (c: (typeof pod.containers)[number], name: string | number) =>
      typeof name === "number" ? name : c.ports?.find((p) => p.name === name)?.containerPort;
    expect(api!.readinessProbe?.httpGet?.path).toBe("/v1/ready");
    expect(api!.livenessProbe?.httpGet?.path).toBe("/v1/health");
    for (const probe of [api!.readinessProbe, api!.livenessProbe]) {
      expect(portOf(api!, probe!.httpGet!.port)).toBe(Number(env.PORT));
    }
    for (const probe of [supervisor!.readinessProbe, supervisor!.livenessProbe]) {
      expect(probe?.httpGet?.path).toBe("/healthz");
      expect(portOf(supervisor!, probe!.httpGet!.port)).toBe(Number(env.RUNNER_BUNDLE_PORT));
    }
  });

  it("points RUNNER_SELF_URL at its own replica's bundle-fetch listener, which the Service also exposes", () => {
    const service = one(objects, "Service", NAME) as K8sObject & {
      spec: { type: string; ports: Array<{ name: string; port: number; targetPort: string | number }> };
    };
    expect(service.spec.type).toBe("ClusterIP");
    const byName = Object.fromEntries(service.spec.ports.map((p) => [p.name, p]));
    expect(Object.keys(byName).sort()).toEqual(["bundles", "http"]);
    const [api, supervisor] = pod.containers;
    expect(api!.ports).toEqual([{ name: "http", containerPort: Number(env.PORT), protocol: "TCP" }]);
    expect(supervisor!.ports).toEqual([
      { name: "bundles", containerPort: Number(env.RUNNER_BUNDLE_PORT), protocol: "TCP" },
      { name: "peer", containerPort: 8065, protocol: "TCP" },
    ]);
    expect(byName.http).toMatchObject({ port: Number(env.PORT), targetPort: "http" });
    expect(byName.bundles).toMatchObject({ port: Number(env.RUNNER_BUNDLE_PORT), targetPort: "bundles" });
    // A session's bundle is staged in the replica that admitted it: its pods fetch from that pod.
    expect(config.selfUrl).toBe(`http://${SAMPLE_POD["status.podIP"]}:${byName.bundles!.port}`);
    expect(config.sessionPods.namespace).toBe(SESSION_NS);
  });

  it("sets no variable to an empty string and no legacy variable", () => {
    for (const [name, value] of Object.entries(env)) expect({ name, value: value.trim() }).not.toEqual({ name, value: "" });
    for (const legacy of ["SESSION_INGRESS_BASE_DOMAIN", "RUNNER_INGRESS_BASE_DOMAIN", "RUNNER_INGRESS_CLASS"]) {
      expect(env).not.toHaveProperty(legacy);
    }
  });

  it("isolates session pods: namespace peers only, the runner reachable only on the bundle port", () => {
    const policy = one(objects, "NetworkPolicy", "telo-k8s-runner-sessions") as NetworkPolicy;
    expect(policy.metadata.namespace).toBe(SESSION_NS);
    expect(policy.spec.podSelector.matchLabels).toEqual({ "app.kubernetes.io/managed-by": config.sessionPods.managedBy });
    expect(policy.spec.policyTypes).toEqual(["Ingress", "Egress"]);
    // ingress: from namespaces only, never from (other session) pods
    const ingressPeers = (policy.spec.ingress ?? []).flatMap((rule) => rule.from ?? []);
    for (const peer of ingressPeers) {
      expect(peer.podSelector).toBeUndefined();
      expect(peer.namespaceSelector?.matchLabels).toHaveProperty(["kubernetes.io/metadata.name"]);
    }
    const fromNamespaces = ingressPeers.map((p) => p.namespaceSelector!.matchLabels!["kubernetes.io/metadata.name"]);
    expect(fromNamespaces).toContain(RUNNER_NS);
    // a base domain without a data-plane peer programs routes nobody can reach
    if (config.routing.baseDomain) expect(fromNamespaces.filter((ns) => ns !== RUNNER_NS)).toHaveLength(1);

    // egress into the runner namespace: the runner pods, bundle port only (not the /v1 API)
    const runnerRules = (policy.spec.egress ?? []).filter((rule) =>
      (rule.to ?? []).some((peer) => peer.namespaceSelector?.matchLabels?.["kubernetes.io/metadata.name"] === RUNNER_NS),
    );
    expect(runnerRules).toHaveLength(1);
    expect(runnerRules[0]!.to).toEqual([
      {
        namespaceSelector: { matchLabels: { "kubernetes.io/metadata.name": RUNNER_NS } },
        podSelector: { matchLabels: deployment.spec.selector.matchLabels },
      },
    ]);
    expect(runnerRules[0]!.ports).toEqual([{ protocol: "TCP", port: Number(env.RUNNER_BUNDLE_PORT) }]);
    expect(Number(env.RUNNER_BUNDLE_PORT)).not.toBe(Number(env.PORT));

    // DNS only to the DNS namespace; the internet minus metadata and private ranges
    const dnsRules = (policy.spec.egress ?? []).filter((rule) => (rule.ports ?? []).some((p) => p.port === 53));
    expect(dnsRules).toHaveLength(1);
    const open = (policy.spec.egress ?? []).flatMap((rule) => rule.to ?? []).filter((p) => p.ipBlock?.cidr === "0.0.0.0/0");
    expect(open).toHaveLength(1);
    expect(open[0]!.ipBlock!.except).toEqual(
      expect.arrayContaining(["169.254.169.254/32", "10.0.0.0/8", "172.16.0.0/12", "192.168.0.0/16"]),
    );
  });

  it("sizes the session quota so RUNNER_MAX_SESSIONS run pods at the ceilings fit", () => {
    const quota = one(objects, "ResourceQuota", "telo-k8s-runner-sessions") as K8sObject & {
      spec: { hard: Record<string, string> };
    };
    expect(quota.metadata.namespace).toBe(SESSION_NS);
    const maxSessions = Number(env.RUNNER_MAX_SESSIONS);
    expect(Number(quota.spec.hard.pods)).toBe(maxSessions);

    // A run pod as the runner builds it with these ceilings: every container, the init
    // container included, carries cpu and memory requests and limits (a cpu/memory quota
    // refuses a container without them).
    const runPodSpec = runPod({
      session: {
        sessionId: "k7m3qx4r2abc",
        mode: "run",
        createdAt: "2026-11-29T16:30:00.000Z",
        apps: [{ name: "app", entryRelativePath: "telo.yaml", ports: [], io: "tty" }],
        inspect: false,
        selfContained: false,
        config: {},
      },
      env: {},
      settings: config.sessionPods,
      limits: config.runCeilings,
      defaultImage: config.defaultImage,
      bundleUrl: `${config.selfUrl}/internal/bundles/k7m3qx4r2abc?token=${"ab".repeat(24)}`,
    }).spec!;
    const containers = [...(runPodSpec.initContainers ?? []), ...runPodSpec.containers];
    for (const c of containers) {
      for (const side of ["requests", "limits"] as const) {
        expect(Object.keys(c.resources?.[side] ?? {})).toEqual(expect.arrayContaining(["cpu", "memory"]));
      }
    }
    // Quota charge of a pod: max(sum over containers, largest init container), per resource.
    const charge = (side: "requests" | "limits", resource: "cpu" | "memory") => {
      const measure = (q: string | undefined) => (resource === "cpu" ? cpuMillicores(q!) : quantityBytes(q!))!;
      const sum = runPodSpec.containers.reduce((total, c) => total + measure(c.resources?.[side]?.[resource]), 0);
      const init = Math.max(0, ...(runPodSpec.initContainers ?? []).map((c) => measure(c.resources?.[side]?.[resource])));
      return Math.max(sum, init);
    };
    expect(charge("requests", "cpu")).toBe(cpuMillicores(env.RUNNER_MAX_CPU!));
    expect(charge("requests", "memory")).toBe(quantityBytes(env.RUNNER_MAX_MEMORY!));
    expect(cpuMillicores(quota.spec.hard["requests.cpu"]!)).toBeGreaterThanOrEqual(maxSessions * charge("requests", "cpu"));
    expect(cpuMillicores(quota.spec.hard["limits.cpu"]!)).toBeGreaterThanOrEqual(maxSessions * charge("limits", "cpu"));
    expect(quantityBytes(quota.spec.hard["requests.memory"]!)).toBeGreaterThanOrEqual(maxSessions * charge("requests", "memory"));
    expect(quantityBytes(quota.spec.hard["limits.memory"]!)).toBeGreaterThanOrEqual(maxSessions * charge("limits", "memory"));

    // The LimitRange backstop gives a container that sets nothing both requests and limits.
    const limitRange = one(objects, "LimitRange", "telo-k8s-runner-sessions") as K8sObject & {
      spec: { limits: Array<{ type: string; default: Record<string, string>; defaultRequest: Record<string, string> }> };
    };
    expect(limitRange.metadata.namespace).toBe(SESSION_NS);
    expect(limitRange.spec.limits[0]).toMatchObject({ type: "Container" });
    expect(Object.keys(limitRange.spec.limits[0]!.default).sort()).toEqual(["cpu", "memory"]);
    expect(Object.keys(limitRange.spec.limits[0]!.defaultRequest).sort()).toEqual(["cpu", "memory"]);
  });

  it("enables the build path exactly when the build component is in, with its namespace and policy", () => {
    const hasBuild = overlay === "build";
    expect(config.build !== undefined).toBe(hasBuild);
    expect(find(objects, "Namespace", BUILD_NS)).toHaveLength(hasBuild ? 1 : 0);
    expect(find(objects, "Role", "telo-k8s-runner-build")).toHaveLength(hasBuild ? 1 : 0);
    if (!hasBuild) return;
    expect(config.build!.namespace).toBe(BUILD_NS);
    expect(namespaceLevel(objects, BUILD_NS)).toBe("baseline");
    const policy = one(objects, "NetworkPolicy", "telo-k8s-runner-build-egress") as NetworkPolicy;
    expect(policy.metadata.namespace).toBe(BUILD_NS);
    expect(policy.spec.podSelector.matchLabels).toEqual({ "app.kubernetes.io/managed-by": config.sessionPods.managedBy });
    expect(policy.spec.policyTypes).toEqual(["Egress"]);
    const open = (policy.spec.egress ?? []).flatMap((rule) => rule.to ?? []).filter((p) => p.ipBlock?.cidr === "0.0.0.0/0");
    expect(open.map((p) => p.ipBlock!.except)).toEqual([["169.254.169.254/32"]]);
  });

  it("resolves routing the way the overlay says, with no TLS secret under a Gateway", () => {
    const expected = { plain: "ingress", build: "ingress", gateway: "gateway", example: "ingress" }[overlay];
    expect(config.routing.mode).toBe(expected);
    expect(config.routing.baseDomain).toBeTruthy();
    if (expected === "gateway") {
      expect(env).not.toHaveProperty("SESSION_INGRESS_TLS_SECRET");
      const gateway = one(objects, "Gateway", config.routing.gatewayName) as K8sObject & {
        spec: { listeners: Array<{ name: string; hostname?: string }> };
      };
      expect(gateway.metadata.namespace).toBe(config.routing.gatewayNamespace);
      const listener = gateway.spec.listeners.find((l) => l.name === config.routing.gatewaySectionName);
      expect(listener?.hostname).toBe(`*.${config.routing.baseDomain}`);
    } else {
      expect(config.routing.ingressClass).toBeTruthy();
    }
  });
});

describe("overlay example", () => {
  const objects = render("overlays/example");
  const deployment = runnerDeployment(objects);

  it("mounts the terms ConfigMap read-only where RUNNER_TERMS_FILE points, in both containers", () => {
    const file = envValue(objects, "RUNNER_TERMS_FILE")!;
    const dir = file.slice(0, file.lastIndexOf("/"));
    const volume = deployment.spec.template.spec.volumes?.find((v) => v.configMap);
    const terms = one(objects, "ConfigMap", volume!.configMap!.name) as K8sObject & { data: Record<string, string> };
    expect(Object.keys(terms.data)).toEqual([file.slice(dir.length + 1)]);
    expect(terms.data["terms.md"]).toMatch(/\S/);
    for (const c of deployment.spec.template.spec.containers) {
      expect(c.volumeMounts).toContainEqual({ name: volume!.name, mountPath: dir, readOnly: true });
    }
  });

  it("passes the apps catalog from a Secret to both processes, never inline", () => {
    for (const c of deployment.spec.template.spec.containers) {
      const apps = containerEnv(objects, c).get("RUNNER_APPS");
      expect(apps?.value).toBeUndefined();
      const ref = apps?.valueFrom?.secretKeyRef;
      expect(ref?.key).toBe("RUNNER_APPS");
      const secret = one(objects, "Secret", ref!.name) as K8sObject & { data: Record<string, string> };
      expect(secret.metadata.namespace).toBe(RUNNER_NS);
      const catalog = JSON.parse(Buffer.from(secret.data.RUNNER_APPS!, "base64").toString("utf8")) as Record<string, unknown>;
      expect(Object.keys(catalog).length).toBeGreaterThan(0);
    }
    expect(envValue(objects, "RUNNER_WATCH_SESSIONS")).toBe("true");
  });

  it("lets Prometheus scrape GET /metrics on the api container's port (the metrics component)", () => {
    const annotations = (deployment.spec.template.metadata as { annotations?: Record<string, string> }).annotations ?? {};
    expect(annotations).toMatchObject({ "prometheus.io/scrape": "true", "prometheus.io/path": "/metrics" });
    const api = deployment.spec.template.spec.containers.find((c) => c.name === "api");
    expect(api?.ports?.map((p) => String(p.containerPort))).toContain(annotations["prometheus.io/port"]);
  });
});

describe("containers the runner creates under the installed configuration", () => {
  // The build overlay's configuration: every pod kind the runner can create exists there.
  const objects = render("overlays/build");
  const config = loadKubeConfig(runnerEnv(objects));
  const session = (overrides: Partial<SessionFacts>): SessionFacts => ({
    sessionId: "k7m3qx4r2abc",
    mode: "run",
    createdAt: "2026-11-29T16:30:00.000Z",
    apps: [{ name: "app", entryRelativePath: "telo.yaml", ports: [{ port: 8080, protocol: "tcp" }], io: "tty" }],
    inspect: false,
    selfContained: false,
    config: {},
    ...overrides,
  });
  const bundleUrl = `${config.selfUrl}/internal/bundles/k7m3qx4r2abc?token=${"ab".repeat(24)}`;
  const common = { env: {}, settings: config.sessionPods, defaultImage: config.defaultImage };
  const pods = {
    "run pod": runPod({ ...common, session: session({}), limits: config.runCeilings, bundleUrl }),
    "run pod (built image)": runPod({
      ...common,
      session: session({}),
      limits: config.runCeilings,
      bundleUrl,
      builtImage: `${config.build!.repository}:${"0".repeat(32)}`,
    }),
    "app pod": appPod({ ...common, session: session({ selfContained: true }), limits: config.appCeilings }),
    "watch pod with agent": watchPod({
      ...common,
      session: session({
        mode: "watch",
        apps: [
          { name: "api", entryRelativePath: "api/telo.yaml", ports: [{ port: 8080, protocol: "tcp" }], io: "tty" },
          { name: "worker", entryRelativePath: "worker/telo.yaml", ports: [], io: "streams" },
        ],
      }),
      limits: config.appCeilings,
      ttlSeconds: 21600,
      nameSuffix: "mihq0x2o1",
      workspaceConfigMap: "telo-workspace-app-0123456789ab",
      agent: { name: "agent", image: "ghcr.io/acme/agent:2.0.0", env: {}, pullPolicy: "missing", port: 7681 },
    }),
    "build job pod": buildJob({
      build: config.build!,
      managedBy: config.sessionPods.managedBy,
      ownerId: config.sessionPods.ownerId,
      initImage: config.sessionPods.initImage,
      tag: "0".repeat(32),
      contextUrl: bundleUrl,
    }).spec!.template,
  };

  it.each(Object.entries(pods))("%s: requests and limits on every container, init containers included", (_, pod) => {
    const containers = [...(pod.spec!.initContainers ?? []), ...pod.spec!.containers];
    expect(containers.length).toBeGreaterThan(0);
    for (const c of containers) {
      expect({ container: c.name, requests: Object.keys(c.resources?.requests ?? {}).sort() }).toEqual({
        container: c.name,
        requests: expect.arrayContaining(["cpu", "memory"]),
      });
      expect({ container: c.name, limits: Object.keys(c.resources?.limits ?? {}).sort() }).toEqual({
        container: c.name,
        limits: expect.arrayContaining(["cpu", "memory"]),
      });
    }
  });

  it.each(Object.entries(pods))("%s: admitted by the Pod Security level of the namespace it goes to", (_, pod) => {
    const namespace = pod.metadata?.namespace ?? (pod === pods["build job pod"] ? config.build!.namespace : undefined);
    expect(namespace).toBeDefined();
    expect(podSecurityViolations(namespaceLevel(objects, namespace!), pod as PodLike)).toEqual([]);
  });

  it("the session NetworkPolicy and the build policy select what the runner creates", () => {
    const sessionPolicy = one(objects, "NetworkPolicy", "telo-k8s-runner-sessions") as NetworkPolicy;
    const buildPolicy = one(objects, "NetworkPolicy", "telo-k8s-runner-build-egress") as NetworkPolicy;
    for (const [name, pod] of Object.entries(pods)) {
      const policy = name === "build job pod" ? buildPolicy : sessionPolicy;
      expect(pod.metadata?.labels).toMatchObject(policy.spec.podSelector.matchLabels);
    }
  });
});

describe("node and control-plane ranges in the kustomize install", () => {
  // The patch docs/deployment.md "Session network isolation" gives an overlay, verbatim.
  const PATCH = [
    "patches:",
    "  - target:",
    "      kind: NetworkPolicy",
    "      name: telo-k8s-runner-sessions",
    "    patch: |-",
    "      - op: add",
    "        path: /spec/egress/2/to/0/ipBlock/except/-",
    "        value: 203.0.113.0/24",
    "      - op: add",
    "        path: /spec/egress/2/to/0/ipBlock/except/-",
    "        value: 198.51.100.7/32",
  ];

  it("the documented overlay patch adds them to the session pods' blocked egress, after k8s/base's ranges", () => {
    const docs = readFileSync(join(REPO_ROOT, "docs/deployment.md"), "utf8");
    expect(docs).toContain(PATCH.join("\n"));
    mkdirSync(join(REPO_ROOT, ".tmp"), { recursive: true });
    const dir = mkdtempSync(join(REPO_ROOT, ".tmp", "node-ranges-"));
    try {
      writeFileSync(join(dir, "kustomization.yaml"), ["resources:", `  - ${relative(dir, join(REPO_ROOT, "k8s/base"))}`, ...PATCH, ""].join("\n"));
      const out = execFileSync("kubectl", ["kustomize", dir], { encoding: "utf8" });
      const objects = parseAllDocuments(out).map((doc) => doc.toJSON() as K8sObject);
      const policy = one(objects, "NetworkPolicy", "telo-k8s-runner-sessions") as NetworkPolicy;
      const open = (policy.spec.egress ?? []).flatMap((rule) => rule.to ?? []).filter((p) => p.ipBlock?.cidr === "0.0.0.0/0");
      const base = (one(render("base"), "NetworkPolicy", "telo-k8s-runner-sessions") as NetworkPolicy).spec.egress![2]!.to![0]!.ipBlock!.except!;
      expect(open.map((p) => p.ipBlock!.except)).toEqual([[...base, "203.0.113.0/24", "198.51.100.7/32"]]);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
