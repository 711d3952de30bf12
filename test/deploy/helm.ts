/**
 * Renders the Helm chart under k8s/chart with `helm template`, the helm that test/deploy/helm.sh
 * builds from its Go module into the tools cache (reused when present), and puts both renderings
 * in the form in which they must be equal.
 */
import { execFileSync } from "node:child_process";
import { isDeepStrictEqual } from "node:util";
import { parseAllDocuments } from "yaml";
import { type K8sObject, REPO_ROOT } from "./render.ts";

/**
 * The release whose names are k8s/base's: the release `telo-k8s-runner` (its fullname and the
 * overlays' `app.kubernetes.io/instance`) in the namespace `telo-runner`, with the session
 * namespace `telo-sessions` (the chart's own default is `<fullname>-sessions`).
 */
export const RELEASE = "telo-k8s-runner";
export const RELEASE_NAMESPACE = "telo-runner";
export const KUSTOMIZE_NAMES = ["sessionNamespace=telo-sessions"];

/** The helm binary, built on first use (a cold build takes minutes; later runs find it). */
export function helmBinary(): string {
  return execFileSync("bash", ["test/deploy/helm.sh"], { cwd: REPO_ROOT, encoding: "utf8", stdio: ["ignore", "pipe", "inherit"] }).trim();
}

export type Release = { name?: string; namespace?: string };

/** `helm template` of k8s/chart as `release` (default: RELEASE in RELEASE_NAMESPACE), test hooks included; later values files win. */
export function helmTemplate(helm: string, valuesFiles: string | string[] | undefined, sets: string[] = [], release: Release = {}): K8sObject[] {
  const { name = RELEASE, namespace = RELEASE_NAMESPACE } = release;
  const files = valuesFiles === undefined ? [] : [valuesFiles].flat();
  const args = ["template", name, "k8s/chart", "--namespace", namespace, ...files.flatMap((file) => ["-f", file]), ...sets.flatMap((set) => ["--set", set])];
  let out: string;
  try {
    out = execFileSync(helm, args, { cwd: REPO_ROOT, encoding: "utf8", stdio: ["ignore", "pipe", "pipe"] });
  } catch (error) {
    throw new Error(`helm ${args.join(" ")} failed: ${String((error as { stderr?: string }).stderr ?? error)}`);
  }
  return parseAllDocuments(out)
    .map((doc) => {
      if (doc.errors.length > 0) throw doc.errors[0];
      return doc.toJSON() as K8sObject | null;
    })
    .filter((o): o is K8sObject => o !== null);
}

// The generated objects whose kustomize names carry a content hash (`<name>-<10 chars>`).
const GENERATED = ["telo-k8s-runner-env", "telo-k8s-runner-terms", "telo-k8s-runner-apps"];

function replaceStrings(value: unknown, map: Map<string, string>): unknown {
  if (typeof value === "string") return map.get(value) ?? value;
  if (Array.isArray(value)) return value.map((item) => replaceStrings(item, map));
  if (value && typeof value === "object") {
    return Object.fromEntries(Object.entries(value).map(([key, item]) => [key, replaceStrings(item, map)]));
  }
  return value;
}

/**
 * The differences the two tools make by design, removed: kustomize's hashed generator names
 * (the chart rolls the pod with checksum annotations instead), the managed-by label's value
 * (`kustomize` / `Helm`), and base64 line wrapping of Secret data.
 */
export function comparable(objects: K8sObject[]): Map<string, K8sObject> {
  const hashed = new Map<string, string>();
  for (const o of objects) {
    const base = GENERATED.find((name) => new RegExp(`^${name}-[a-z0-9]{10}$`).test(o.metadata.name));
    if (base) hashed.set(o.metadata.name, base);
  }
  const byKey = new Map<string, K8sObject>();
  for (const original of objects) {
    const o = replaceStrings(structuredClone(original), hashed) as K8sObject;
    if (o.metadata.labels?.["app.kubernetes.io/managed-by"]) o.metadata.labels["app.kubernetes.io/managed-by"] = "<tool>";
    const template = (o as { spec?: { template?: { metadata?: { annotations?: Record<string, string> } } } }).spec?.template?.metadata;
    if (template?.annotations) {
      for (const key of Object.keys(template.annotations)) if (key.startsWith("checksum/")) delete template.annotations[key];
      if (Object.keys(template.annotations).length === 0) delete template.annotations;
    }
    if (o.kind === "Secret") {
      const data = (o as { data?: Record<string, string> }).data ?? {};
      for (const key of Object.keys(data)) data[key] = Buffer.from(data[key]!, "base64").toString("utf8");
    }
    byKey.set(`${o.kind} ${o.metadata.namespace ?? ""}/${o.metadata.name}`, o);
  }
  return byKey;
}

/** Where two values differ, as `path: overlay value ≠ chart value`. */
function pathsThatDiffer(expected: unknown, actual: unknown, path: string): string[] {
  if (isDeepStrictEqual(expected, actual)) return [];
  const bothObjects = [expected, actual].every((x) => x && typeof x === "object" && Array.isArray(x) === Array.isArray(expected));
  if (!bothObjects || (Array.isArray(expected) && (expected as unknown[]).length !== (actual as unknown[]).length)) {
    return [`${path || "."}: ${JSON.stringify(expected)} ≠ ${JSON.stringify(actual)}`];
  }
  const [e, a] = [expected as Record<string, unknown>, actual as Record<string, unknown>];
  return [...new Set([...Object.keys(e), ...Object.keys(a)])].flatMap((key) => pathsThatDiffer(e[key], a[key], `${path}.${key}`));
}

/** The objects that differ between two renderings, each named, for a readable failure. */
export function differences(expected: Map<string, K8sObject>, actual: Map<string, K8sObject>): string[] {
  const out: string[] = [];
  for (const key of new Set([...expected.keys(), ...actual.keys()])) {
    const [e, a] = [expected.get(key), actual.get(key)];
    if (!e) out.push(`only in the chart: ${key}`);
    else if (!a) out.push(`only in the overlay: ${key}`);
    else if (!isDeepStrictEqual(e, a)) out.push(`differs: ${key}: ${pathsThatDiffer(e, a, "").join("; ")}`);
  }
  return out;
}

/** The label keys only Helm's rendering carries (well-kept charts' chart and version labels). */
const HELM_ONLY_LABELS = ["helm.sh/chart", "app.kubernetes.io/version"];
const INSTANCE = "app.kubernetes.io/instance";

function withoutKey(value: unknown, key: string): unknown {
  if (Array.isArray(value)) return value.map((item) => withoutKey(item, key));
  if (value && typeof value === "object") {
    return Object.fromEntries(Object.entries(value).filter(([k]) => k !== key).map(([k, item]) => [k, withoutKey(item, key)]));
  }
  return value;
}

/**
 * The chart's rendering with what it does differently from k8s/base on purpose taken out, so
 * that everything else must still be equal:
 * - the test hook (`helm test`), which kustomize has no place for;
 * - the chart and version labels Helm charts carry;
 * - the instance label in selectors and pod labels: two releases may share a namespace, so each
 *   selects only its own pods; the kustomize install is one per cluster, and its Deployment's
 *   selector is immutable, so adding the label there would refuse every `kubectl apply` of an
 *   existing install;
 * - RUNNER_OWNER_ID: each release gets its own identity; the kustomize install keeps the default
 *   one, which also owns the unlabelled pods of earlier versions (docs/ownership.md).
 */
export function chartAsKustomize(objects: K8sObject[]): K8sObject[] {
  return objects
    .filter((o) => o.metadata.annotations?.["helm.sh/hook"] === undefined)
    .map((original) => {
      const { metadata, ...rest } = structuredClone(original);
      const labels = Object.fromEntries(Object.entries(metadata.labels ?? {}).filter(([key]) => !HELM_ONLY_LABELS.includes(key)));
      const o = { ...(withoutKey(rest, INSTANCE) as object), metadata: { ...metadata, labels } } as K8sObject;
      const data = (o as { data?: Record<string, string> }).data;
      if (o.kind === "ConfigMap" && o.metadata.name.endsWith("-env") && data) delete data.RUNNER_OWNER_ID;
      return o;
    });
}

/**
 * k8s/base's rendering without its runner Namespace: the chart runs in the release's namespace,
 * which helm needs before it creates anything (`helm install --create-namespace`), so no chart
 * can create it.
 */
export function kustomizeAsChart(objects: K8sObject[]): K8sObject[] {
  return objects.filter((o) => !(o.kind === "Namespace" && o.metadata.name === RELEASE_NAMESPACE));
}
