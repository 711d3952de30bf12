// ResourceQuota: admission (403 "exceeded quota" / "must specify") and the quota controller's
// status.used, both computed from what the store holds right now.
import type { KubeObject } from "./object.ts";
import { lookupType, typeKey, type ResourceType } from "./resources.ts";
import { forbidden } from "./status.ts";
import type { Store } from "./store.ts";
import { parseQuantity, formatQuantity } from "./quantity.ts";

const QUOTA = lookupType("", "v1", "resourcequotas")!;
const POD = lookupType("", "v1", "pods")!;

const COMPUTE = ["requests.cpu", "requests.memory", "limits.cpu", "limits.memory", "requests.ephemeral-storage", "limits.ephemeral-storage"];

function isTerminal(pod: KubeObject): boolean {
  return pod.status?.phase === "Succeeded" || pod.status?.phase === "Failed";
}

/** A pod's effective compute: the sum of its containers, or its largest init container if bigger. */
function podCompute(pod: KubeObject): Record<string, number> {
  const out: Record<string, number> = {};
  const spec = pod.spec ?? {};
  for (const name of COMPUTE) {
    const [kind, res] = name.split(".") as ["requests" | "limits", string];
    const sum = (spec.containers ?? []).reduce((n: number, c: KubeObject["spec"]) => n + parseQuantity(c.resources?.[kind]?.[res]), 0);
    const init = Math.max(0, ...(spec.initContainers ?? []).map((c: KubeObject["spec"]) => parseQuantity(c.resources?.[kind]?.[res])));
    out[name] = Math.max(sum, init);
  }
  out["cpu"] = out["requests.cpu"]!;
  out["memory"] = out["requests.memory"]!;
  out["ephemeral-storage"] = out["requests.ephemeral-storage"]!;
  return out;
}

/** What one object counts against each quota resource name. */
function usageOf(type: ResourceType, obj: KubeObject): Record<string, number> {
  const usage: Record<string, number> = { [`count/${typeKey(type)}`]: 1 };
  if (type.group === "") usage[type.plural] = 1;
  if (type === POD) Object.assign(usage, podCompute(obj));
  return usage;
}

function counted(type: ResourceType, obj: KubeObject): boolean {
  return type !== POD || !isTerminal(obj);
}

function usedIn(store: Store, namespace: string, resources: string[]): Record<string, number> {
  const used: Record<string, number> = Object.fromEntries(resources.map((r) => [r, 0]));
  for (const c of store.allCollections()) {
    if (!c.type.namespaced) continue;
    for (const obj of c.objects.values()) {
      if (obj.metadata.namespace !== namespace || !counted(c.type, obj)) continue;
      const u = usageOf(c.type, obj);
      for (const r of resources) used[r]! += u[r] ?? 0;
    }
  }
  return used;
}

function pretty(resources: string[], values: Record<string, number>): string {
  return resources.map((r) => `${r}=${formatQuantity(r, values[r] ?? 0)}`).join(",");
}

/** The compute a quota on cpu or memory obliges every container to state (the pod evaluator's validation set). */
const MUST_SPECIFY = ["cpu", "memory", "requests.cpu", "requests.memory", "limits.cpu", "limits.memory"];

/**
 * The pod evaluator's constraint: when a quota limits cpu or memory, every container, init
 * containers included, must state it; the apiserver's words list each missing resource with the
 * containers lacking it (`must specify limits.cpu for: body-fetch,session; requests.memory for: x`).
 */
function missingCompute(pod: KubeObject, quotaResources: string[]): string | undefined {
  const required = quotaResources.filter((r) => MUST_SPECIFY.includes(r));
  const lacking = new Map<string, Set<string>>();
  for (const c of [...(pod.spec?.containers ?? []), ...(pod.spec?.initContainers ?? [])]) {
    for (const r of required) {
      const [kind, res] = r.includes(".") ? (r.split(".") as ["requests" | "limits", string]) : (["requests", r] as const);
      if (c.resources?.[kind]?.[res] !== undefined) continue;
      if (!lacking.has(r)) lacking.set(r, new Set());
      lacking.get(r)!.add(c.name);
    }
  }
  if (lacking.size === 0) return undefined;
  const parts = [...lacking.keys()].sort().map((r) => `${r} for: ${[...lacking.get(r)!].sort().join(",")}`);
  return `must specify ${parts.join("; ")}`;
}

export function checkQuota(store: Store, type: ResourceType, obj: KubeObject): void {
  const ns = obj.metadata.namespace;
  if (!ns) return;
  const quotas = store.list(QUOTA, ns);
  if (quotas.length === 0) return;
  const usage = usageOf(type, obj);
  for (const q of quotas) {
    const hard: Record<string, string> = q.spec?.hard ?? {};
    const names = Object.keys(hard).sort();
    if (type === POD) {
      const missing = missingCompute(obj, names);
      if (missing) throw forbidden({ group: "", plural: type.plural }, obj.metadata.name, `failed quota: ${q.metadata.name}: ${missing}`);
    }
    const relevant = names.filter((r) => (usage[r] ?? 0) > 0);
    if (relevant.length === 0) continue;
    const used = usedIn(store, ns, relevant);
    const over = relevant.filter((r) => used[r]! + usage[r]! > parseQuantity(hard[r]));
    if (over.length > 0) {
      const limited = Object.fromEntries(over.map((r) => [r, parseQuantity(hard[r])]));
      throw forbidden(
        { group: type.group, plural: type.plural },
        obj.metadata.name,
        `exceeded quota: ${q.metadata.name}, requested: ${pretty(over, usage)}, used: ${pretty(over, used)}, limited: ${pretty(over, limited)}`,
      );
    }
  }
}

/** The quota controller: keeps status.hard/status.used current for every quota in `namespace`. */
export function refreshQuotaStatus(store: Store, namespace: string): void {
  for (const q of store.list(QUOTA, namespace)) {
    const hard: Record<string, string> = q.spec?.hard ?? {};
    const names = Object.keys(hard);
    const used = usedIn(store, namespace, names);
    const status = {
      hard: { ...hard },
      used: Object.fromEntries(names.map((r) => [r, formatQuantity(r, used[r]!)])),
    };
    if (JSON.stringify(q.status) === JSON.stringify(status)) continue;
    store.mutate(QUOTA, namespace, q.metadata.name, (d) => {
      d.status = status;
    });
  }
}
