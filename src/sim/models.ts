// The official Kubernetes types as client-node generates them from the OpenAPI: field names and
// types per model (V1Pod, V1PodSpec…). Used for field validation and the OpenAPI documents.
import * as clientNode from "@kubernetes/client-node";

export interface Attribute {
  baseName: string;
  type: string;
  format: string;
}
type Model = { getAttributeTypeMap(): Attribute[] };

const registry = clientNode as unknown as Record<string, Model | undefined>;

/** The model of a kind of a group version, e.g. batch/v1 Job → V1Job; undefined for kinds client-node lacks. */
export function modelName(apiVersion: string, kind: string): string | undefined {
  const core = !apiVersion.includes("/");
  const version = core ? apiVersion : apiVersion.slice(apiVersion.indexOf("/") + 1);
  const name = `${version.charAt(0).toUpperCase()}${version.slice(1)}${kind}`;
  // Core types whose name another group also uses carry a prefix (CoreV1Event vs events.k8s.io's V1Event).
  const candidates = core ? [`Core${name}`, name] : [name];
  return candidates.find((n) => typeof registry[n]?.getAttributeTypeMap === "function");
}

const cache = new Map<string, Map<string, Attribute>>();

/** A model's fields by JSON name, or undefined when `model` is not a model (a scalar, a map…). */
export function attributes(model: string): Map<string, Attribute> | undefined {
  let m = cache.get(model);
  if (!m) {
    const cls = registry[model];
    if (typeof cls?.getAttributeTypeMap !== "function") return undefined;
    m = new Map(cls.getAttributeTypeMap().map((a) => [a.baseName, a]));
    cache.set(model, m);
  }
  return m;
}
