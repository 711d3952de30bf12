// The resource types the simulator serves: one table drives routing, discovery, OpenAPI paths,
// error wording (`jobs.batch "x" not found`) and per-type behaviour flags.

export interface ResourceType {
  group: string;
  version: string;
  plural: string;
  singular: string;
  kind: string;
  namespaced: boolean;
  shortNames: string[];
  /** Subresources served besides the object itself. */
  subresources: string[];
  /**
   * The type carries metadata.generation: 1 on create, bumped when the spec changes and when a
   * deletion first sets deletionTimestamp (the apiserver does this for pods and most workload types).
   */
  generation: boolean;
  categories?: string[];
}

const ALL_VERBS = ["create", "delete", "deletecollection", "get", "list", "patch", "update", "watch"];

export const RESOURCE_TYPES: readonly ResourceType[] = [
  { group: "", version: "v1", plural: "namespaces", singular: "namespace", kind: "Namespace", namespaced: false, shortNames: ["ns"], subresources: ["status", "finalize"], generation: false },
  { group: "", version: "v1", plural: "nodes", singular: "node", kind: "Node", namespaced: false, shortNames: ["no"], subresources: ["status"], generation: false },
  { group: "", version: "v1", plural: "pods", singular: "pod", kind: "Pod", namespaced: true, shortNames: ["po"], subresources: ["status", "log", "attach", "exec"], generation: true, categories: ["all"] },
  { group: "", version: "v1", plural: "services", singular: "service", kind: "Service", namespaced: true, shortNames: ["svc"], subresources: ["status"], generation: false, categories: ["all"] },
  { group: "", version: "v1", plural: "configmaps", singular: "configmap", kind: "ConfigMap", namespaced: true, shortNames: ["cm"], subresources: [], generation: false },
  { group: "", version: "v1", plural: "secrets", singular: "secret", kind: "Secret", namespaced: true, shortNames: [], subresources: [], generation: false },
  { group: "", version: "v1", plural: "events", singular: "event", kind: "Event", namespaced: true, shortNames: ["ev"], subresources: [], generation: false },
  { group: "", version: "v1", plural: "resourcequotas", singular: "resourcequota", kind: "ResourceQuota", namespaced: true, shortNames: ["quota"], subresources: ["status"], generation: false },
  { group: "batch", version: "v1", plural: "jobs", singular: "job", kind: "Job", namespaced: true, shortNames: [], subresources: ["status"], generation: true, categories: ["all"] },
  { group: "networking.k8s.io", version: "v1", plural: "ingresses", singular: "ingress", kind: "Ingress", namespaced: true, shortNames: ["ing"], subresources: ["status"], generation: true },
  { group: "networking.k8s.io", version: "v1", plural: "ingressclasses", singular: "ingressclass", kind: "IngressClass", namespaced: false, shortNames: [], subresources: [], generation: true },
  { group: "node.k8s.io", version: "v1", plural: "runtimeclasses", singular: "runtimeclass", kind: "RuntimeClass", namespaced: false, shortNames: [], subresources: [], generation: false },
  { group: "coordination.k8s.io", version: "v1", plural: "leases", singular: "lease", kind: "Lease", namespaced: true, shortNames: [], subresources: [], generation: false },
  { group: "gateway.networking.k8s.io", version: "v1", plural: "gateways", singular: "gateway", kind: "Gateway", namespaced: true, shortNames: ["gtw"], subresources: ["status"], generation: true, categories: ["gateway-api"] },
  { group: "gateway.networking.k8s.io", version: "v1", plural: "httproutes", singular: "httproute", kind: "HTTPRoute", namespaced: true, shortNames: [], subresources: ["status"], generation: true, categories: ["gateway-api"] },
];

export function verbsFor(type: ResourceType): string[] {
  return type.kind === "Namespace" ? ALL_VERBS.filter((v) => v !== "deletecollection") : ALL_VERBS;
}

export function apiVersionOf(type: ResourceType): string {
  return type.group ? `${type.group}/${type.version}` : type.version;
}

/** Key used for counters and listener registration: `pods`, `jobs.batch`. */
export function typeKey(type: ResourceType): string {
  return type.group ? `${type.plural}.${type.group}` : type.plural;
}

const byPath = new Map<string, ResourceType>();
for (const t of RESOURCE_TYPES) byPath.set(`${t.group}/${t.version}/${t.plural}`, t);

export function lookupType(group: string, version: string, plural: string): ResourceType | undefined {
  return byPath.get(`${group}/${version}/${plural}`);
}

/** Every served group/version, core first, as discovery lists them. */
export function groupVersions(): { group: string; version: string }[] {
  const seen = new Set<string>();
  const out: { group: string; version: string }[] = [];
  for (const t of RESOURCE_TYPES) {
    const k = `${t.group}/${t.version}`;
    if (!seen.has(k)) {
      seen.add(k);
      out.push({ group: t.group, version: t.version });
    }
  }
  return out;
}
