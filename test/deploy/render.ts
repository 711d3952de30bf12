/**
 * Renders the kustomize overlays under k8s/ with `kubectl kustomize` (the real tool, as
 * `kubectl apply -k` runs it) and gives typed access to the rendered objects.
 */
import { execFileSync } from "node:child_process";
import { fileURLToPath } from "node:url";
import { parseAllDocuments } from "yaml";

export const REPO_ROOT = fileURLToPath(new URL("../../", import.meta.url));

/** Every overlay a user can apply, plus the base on its own. */
export const OVERLAYS = ["plain", "build", "gateway", "example"] as const;
export type Overlay = (typeof OVERLAYS)[number];
export const TARGETS = ["base", ...OVERLAYS.map((o) => `overlays/${o}`)] as const;

export type K8sObject = {
  apiVersion: string;
  kind: string;
  metadata: {
    name: string;
    namespace?: string;
    labels?: Record<string, string>;
    annotations?: Record<string, string>;
  };
  [key: string]: unknown;
};

const cache = new Map<string, K8sObject[]>();

/** `kubectl kustomize k8s/<target>`, parsed; throws with kubectl's stderr when it fails. */
export function render(target: string): K8sObject[] {
  const cached = cache.get(target);
  if (cached) return cached;
  let out: string;
  try {
    out = execFileSync("kubectl", ["kustomize", `k8s/${target}`], {
      cwd: REPO_ROOT,
      encoding: "utf8",
      stdio: ["ignore", "pipe", "pipe"],
    });
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") {
      throw new Error("kubectl is not on PATH: the deployment tests need kubectl >= 1.27 (kustomize v5) to render k8s/");
    }
    throw new Error(`kubectl kustomize k8s/${target} failed: ${String((error as { stderr?: string }).stderr ?? error)}`);
  }
  const objects = parseAllDocuments(out)
    .map((doc) => {
      if (doc.errors.length > 0) throw doc.errors[0];
      return doc.toJSON() as K8sObject | null;
    })
    .filter((o): o is K8sObject => o !== null);
  cache.set(target, objects);
  return objects;
}

export function find(objects: K8sObject[], kind: string, name?: string): K8sObject[] {
  return objects.filter((o) => o.kind === kind && (name === undefined || o.metadata.name === name));
}

export function one(objects: K8sObject[], kind: string, name?: string): K8sObject {
  const found = find(objects, kind, name);
  if (found.length !== 1) {
    throw new Error(`expected exactly one ${kind}${name ? ` ${name}` : ""}, found ${found.length}`);
  }
  return found[0]!;
}

// ---- the parts of the Deployment the tests read ----

export type EnvVar = {
  name: string;
  value?: string;
  valueFrom?: { secretKeyRef?: { name: string; key: string }; configMapKeyRef?: { name: string; key: string }; fieldRef?: { fieldPath: string } };
};

/** What the downward API gives a runner pod in these tests: a pod of the Deployment, its IP. */
export const SAMPLE_POD = { "metadata.name": "telo-k8s-runner-5d8c7b9f4-x2k9q", "status.podIP": "10.244.0.17" } as const;
export type Container = {
  name: string;
  image: string;
  command?: string[];
  args?: string[];
  env?: EnvVar[];
  envFrom?: Array<{ configMapRef?: { name: string }; secretRef?: { name: string } }>;
  ports?: Array<{ name?: string; containerPort: number; protocol?: string }>;
  readinessProbe?: Probe;
  livenessProbe?: Probe;
  startupProbe?: Probe;
  resources?: { requests?: Record<string, string>; limits?: Record<string, string> };
  securityContext?: Record<string, unknown>;
  volumeMounts?: Array<{ name: string; mountPath: string; readOnly?: boolean }>;
};
export type Probe = { httpGet?: { path: string; port: number | string }; exec?: { command: string[] } };
export type PodSpec = {
  serviceAccountName?: string;
  enableServiceLinks?: boolean;
  securityContext?: Record<string, unknown>;
  initContainers?: Container[];
  containers: Container[];
  volumes?: Array<{ name: string; emptyDir?: { medium?: string; sizeLimit?: string }; configMap?: { name: string } }>;
};
export type Deployment = K8sObject & {
  spec: {
    replicas: number;
    strategy: { type: string };
    selector: { matchLabels: Record<string, string> };
    template: { metadata: { labels: Record<string, string> }; spec: PodSpec };
  };
};

export function runnerDeployment(objects: K8sObject[]): Deployment {
  return one(objects, "Deployment", "telo-k8s-runner") as Deployment;
}

/** The ConfigMap data a container's envFrom pulls in, merged in order, then its own env. */
export function containerEnv(objects: K8sObject[], container: Container): Map<string, EnvVar> {
  const env = new Map<string, EnvVar>();
  for (const source of container.envFrom ?? []) {
    if (source.configMapRef) {
      const cm = one(objects, "ConfigMap", source.configMapRef.name) as K8sObject & { data?: Record<string, string> };
      for (const [name, value] of Object.entries(cm.data ?? {})) env.set(name, { name, value });
    }
    if (source.secretRef) throw new Error("envFrom a Secret is not expected (name the keys with secretKeyRef)");
  }
  // As the kubelet does: a field of the pod's own, and $(NAME) of a variable defined before.
  for (const e of container.env ?? []) {
    const field = e.valueFrom?.fieldRef?.fieldPath;
    const value = field !== undefined ? SAMPLE_POD[field as keyof typeof SAMPLE_POD] : e.value?.replace(/\$\(([A-Za-z_][A-Za-z0-9_]*)\)/g, (ref, name: string) => env.get(name)?.value ?? ref);
    if (field !== undefined && value === undefined) throw new Error(`no sample value for the downward API field ${field}`);
    env.set(e.name, value === undefined ? e : { name: e.name, value });
  }
  return env;
}

/** Variables the Deployment defines only to be expanded into others ($(NAME)), which the runner never reads. */
export function expansionOnly(container: Container): string[] {
  const referenced = new Set((container.env ?? []).flatMap((e) => [...(e.value ?? "").matchAll(/\$\(([A-Za-z_][A-Za-z0-9_]*)\)/g)].map((m) => m[1]!)));
  return [...referenced];
}

/** The plain value of a variable in the runner's env (every container agrees on it). */
export function envValue(objects: K8sObject[], name: string): string | undefined {
  const values = new Set(
    runnerDeployment(objects).spec.template.spec.containers.map((c) => containerEnv(objects, c).get(name)?.value),
  );
  if (values.size !== 1) throw new Error(`containers disagree on ${name}: ${[...values].join(", ")}`);
  return [...values][0];
}
