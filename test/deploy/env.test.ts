import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { clusterEnvSchema } from "../../src/config/cluster-source.ts";
import { consoleEnvSchema } from "../../src/config/console.ts";
import { coreEnvSchema, loadCoreConfig } from "../../src/config/core.ts";
import { kubeEnvSchema, loadKubeConfig } from "../../src/config/kube.ts";
import { containerEnv, expansionOnly, OVERLAYS, REPO_ROOT, render, runnerDeployment, type K8sObject } from "./render.ts";

/** Every variable a runner process reads (the config modules' schemas are keyed by name). */
const READ = new Set([
  ...Object.keys(coreEnvSchema.entries),
  ...Object.keys(kubeEnvSchema.entries),
  ...Object.keys(consoleEnvSchema.entries),
  ...Object.keys(clusterEnvSchema.entries),
]);

/**
 * Variables the code reads that no overlay sets, on purpose: their defaults are right for an
 * install, or they are per-install choices documented in docs/operating.md "Install knobs".
 */
const LEFT_TO_DEFAULTS: Record<string, string> = {
  RUNNER_MANAGED_BY: "must stay telo-k8s-runner: the session NetworkPolicy selects on it",
  RUNNER_OWNER_ID: "default: the install's runner replicas own all of its objects, unlabelled ones included (docs/ownership.md)",
  RUNNER_SHARDS: "default 32 (docs/replicas.md)",
  RUNNER_LEASE_DURATION_SECONDS: "default 15, client-go's (docs/replicas.md)",
  RUNNER_EXIT_TTL_MS: "default 4 h",
  RUNNER_REPLAY_BUFFER_BYTES: "default 5 MB",
  RUNNER_CORS_ORIGINS: "default *; the runner sits behind the control plane",
  RUNNER_TERMS_BODY: "the manifests use RUNNER_TERMS_FILE (the terms ConfigMap)",
  RUNNER_TERMS_VERSION: "default: a hash of the terms text",
  RUNNER_DESCRIPTION: "optional; omitted rather than empty",
  RUNNER_IMAGE: "baked into the image at build time (Dockerfile TELO_SESSION_IMAGE)",
  RUNNER_IMAGE_PULL_SECRET: "optional; names an operator-managed Secret",
  RUNNER_RUNTIME_CLASS: "optional; a sandbox RuntimeClass the cluster must provide",
  RUNNER_APP_MAX_CPU: "default 500m",
  RUNNER_APP_MAX_MEMORY: "default 512Mi",
  RUNNER_APP_MAX_TTL_SECONDS: "default 21600",
  RUNNER_APP_MAX_EPHEMERAL_STORAGE: "default 1Gi",
  SESSION_INGRESS_TLS_SECRET: "optional; an operator-managed TLS Secret (never under a Gateway)",
  RUNNER_BASE_IMAGE_INCLUDE: "optional regex",
  RUNNER_BASE_IMAGE_EXCLUDE: "optional regex",
  RUNNER_REGISTRY_PUSH_SECRET: "optional; an operator-managed dockerconfigjson Secret",
  RUNNER_START_DEADLINE_SECONDS: "default 120 (docs/kubernetes.md, Start)",
  RUNNER_CONSOLE: "off: the console lists every session; an operator turns it on in env",
  RUNNER_SIMULATED_CLUSTER: "only for the embedded simulated cluster of npm start; never in a real cluster",
  RUNNER_API_TOKEN: "optional access control; a Secret the operator adds (docs/operating.md Security)",
  RUNNER_BIND_ADDRESS: "default 0.0.0.0: the Service reaches the pod IP",
  RUNNER_CREATE_RATE_LIMIT: "optional; behind a proxy every client shares one address (docs/operating.md Security)",
  KUBERNETES_SERVICE_HOST: "set by the kubelet in every pod: the runner then uses its service account",
  KUBECONFIG: "outside a pod only; in the Deployment the service account is used",
  HOME: "outside a pod only: where ~/.kube/config is looked for",
  RUNNER_WARM_POOL_SIZE: "off (0): each pool pod charges the session quota a run pod, which an operator sizes first (docs/kubernetes.md Warm pool)",
  RUNNER_WARM_POOL_MAX_IDLE_SECONDS: "default 600; only with the warm pool",
  RUNNER_PEER_SECRET: "optional: the replicas keep a credential of their own in the cluster (docs/replicas.md)",
  RUNNER_PEER_SUPERVISOR: "off: the api reaches its own supervisor over the Unix socket (docs/relay.md)",
  RUNNER_TERMINAL_HANDOFF: "default true: the api hands terminals to the supervisor beside it (docs/relay.md The handoff)",
  RUNNER_TELO_VERSIONS: "default true: sessions may name a Telo version (docs/telo-versions.md)",
  RUNNER_TELO_IMAGE_REPOSITORY: "default telorun/node, the published version images",
  RUNNER_TELO_IMAGE_VARIANT: "default slim",
  RUNNER_TELO_UNRELEASED_IMAGE: "optional; unreleased versions are refused without it",
  RUNNER_PULL_POLICY: "default missing, for sessions that name a version",
  RUNNER_IMAGE_TELO_VERSION: "optional; says which Telo version RUNNER_IMAGE carries (the workspace marker)",
  RUNNER_TELO_COMMENT_MARKER_SINCE: "default 0.96.0 (docs/telo-versions.md)",
};

function wiredNames(objects: K8sObject[]): Set<string> {
  const names = new Set<string>();
  for (const container of runnerDeployment(objects).spec.template.spec.containers) {
    for (const name of containerEnv(objects, container).keys()) names.add(name);
  }
  return names;
}

/** The env a process sees; the terms file is read from the component's source instead of the mount. */
function processEnv(objects: K8sObject[]): Record<string, string> {
  const env: Record<string, string> = {};
  const container = runnerDeployment(objects).spec.template.spec.containers[0]!;
  for (const [name, variable] of containerEnv(objects, container)) {
    if (variable.value !== undefined) env[name] = variable.value;
    const ref = variable.valueFrom?.secretKeyRef;
    if (ref) {
      const secret = objects.find((o) => o.kind === "Secret" && o.metadata.name === ref.name) as
        | (K8sObject & { data: Record<string, string> })
        | undefined;
      env[name] = Buffer.from(secret!.data[ref.key]!, "base64").toString("utf8");
    }
  }
  if (env.RUNNER_TERMS_FILE) env.RUNNER_TERMS_FILE = join(REPO_ROOT, "k8s/components/terms/terms.md");
  return env;
}

describe("the Deployment's env and the variables the runner reads", () => {
  it.each(OVERLAYS)("%s wires only variables the runner reads, besides the pod IP expanded into its addresses", (overlay) => {
    const objects = render(`overlays/${overlay}`);
    const expanded = new Set(runnerDeployment(objects).spec.template.spec.containers.flatMap(expansionOnly));
    expect([...expanded]).toEqual(["POD_IP"]);
    const unread = [...wiredNames(objects)].filter((name) => !READ.has(name) && !expanded.has(name));
    expect(unread).toEqual([]);
  });

  it("leaves exactly the documented variables to their defaults", () => {
    const wired = new Set(OVERLAYS.flatMap((overlay) => [...wiredNames(render(`overlays/${overlay}`))]));
    const notWired = [...READ].filter((name) => !wired.has(name)).sort();
    expect(notWired).toEqual(Object.keys(LEFT_TO_DEFAULTS).sort());
  });

  it.each(OVERLAYS)("%s starts: both config loaders accept its env", (overlay) => {
    const env = processEnv(render(`overlays/${overlay}`));
    const core = loadCoreConfig(env);
    const kube = loadKubeConfig(env);
    expect(core.port).toBe(8062);
    expect(core.internalSocketPath).toBe("/run/k8s-runner/supervisor.sock");
    expect(kube.bundlePort).toBe(8063);
    if (overlay === "example") {
      expect(core.terms).toBeDefined();
      expect([...core.apps.keys()]).toEqual(["hello"]);
      expect(core.watch.enabled).toBe(true);
    }
  });
});
