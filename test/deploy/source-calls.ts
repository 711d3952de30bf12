/**
 * The Kubernetes API calls the runner's source can make, read from the code: every method called
 * on the typed clients of src/kube/cluster/api.ts (`core`, `networking`, `batch`, `coordination`, `custom`), every watch
 * path and every attach. Complements the calls recorded against the simulated cluster, which
 * only cover the paths the tests drive. An unknown method fails loudly so the map stays complete.
 */
import { readdirSync, readFileSync, statSync } from "node:fs";
import { join, relative } from "node:path";
import { REPO_ROOT } from "./render.ts";

export type SourceCall = { verb: string; apiGroup: string; resource: string };

const CLIENT_GROUP: Record<string, string> = { core: "", networking: "networking.k8s.io", batch: "batch", coordination: "coordination.k8s.io" };

const KIND_RESOURCE: Record<string, string> = {
  Pod: "pods",
  PodLog: "pods/log",
  PodAttach: "pods/attach",
  Service: "services",
  ConfigMap: "configmaps",
  Secret: "secrets",
  Event: "events",
  Namespace: "namespaces",
  Ingress: "ingresses",
  IngressClass: "ingressclasses",
  Job: "jobs",
  Lease: "leases",
};

const VERB: Record<string, string> = {
  read: "get",
  list: "list",
  create: "create",
  replace: "update",
  patch: "patch",
  delete: "delete",
  deleteCollection: "deletecollection",
  get: "get",
};

/** The runner's own code: everything under src/ except the simulator and the HTTP client library. */
function sourceFiles(dir = join(REPO_ROOT, "src")): string[] {
  const out: string[] = [];
  for (const entry of readdirSync(dir)) {
    const path = join(dir, entry);
    const rel = relative(join(REPO_ROOT, "src"), path);
    if (rel === "sim" || rel === "client") continue;
    if (statSync(path).isDirectory()) out.push(...sourceFiles(path));
    else if (path.endsWith(".ts")) out.push(path);
  }
  return out;
}

function methodCall(client: string, method: string, file: string, text: string): SourceCall {
  if (client === "custom") {
    // Custom objects: the runner's only custom resource is the Gateway API HTTPRoute.
    if (!/HTTPROUTES|"httproutes"/.test(text)) throw new Error(`${file}: custom-object call ${method} on an unknown resource`);
    const m = /^(get|list|create|replace|patch|delete)NamespacedCustomObject$/.exec(method);
    if (!m) throw new Error(`${file}: unmapped custom-object method ${method}`);
    return { verb: VERB[m[1]!]!, apiGroup: "gateway.networking.k8s.io", resource: "httproutes" };
  }
  const m = /^(read|list|create|replace|patch|delete|deleteCollection)(Namespaced)?([A-Z]\w*?)(Status)?$/.exec(method);
  const resource = m ? KIND_RESOURCE[m[3]!] : undefined;
  if (!m || resource === undefined) throw new Error(`${file}: unmapped API method ${client}.${method}`);
  return { verb: VERB[m[1]!]!, apiGroup: CLIENT_GROUP[client]!, resource: m[4] ? `${resource}/status` : resource };
}

export function sourceApiCalls(): SourceCall[] {
  const calls = new Map<string, SourceCall>();
  const add = (call: SourceCall) => calls.set(`${call.verb} ${call.apiGroup}/${call.resource}`, call);
  for (const file of sourceFiles()) {
    const text = readFileSync(file, "utf8");
    for (const m of text.matchAll(/\.(core|networking|batch|coordination|custom)\.(\w+)\(/g)) add(methodCall(m[1]!, m[2]!, file, text));
    for (const m of text.matchAll(/\.watch\.watch\(\s*`([^`]*)`/g)) {
      const path = /\/api\/v1\/(?:namespaces\/[^/]+\/)?(\w+)$|\/apis\/([^/]+)\/[^/]+\/(?:namespaces\/[^/]+\/)?(\w+)$/.exec(m[1]!);
      if (!path) throw new Error(`${file}: unmapped watch path ${m[1]}`);
      add({ verb: "watch", apiGroup: path[2] ?? "", resource: path[1] ?? path[3]! });
    }
    if (/\battachContainer\(/.test(text) && !file.endsWith("attach.ts")) add({ verb: "get", apiGroup: "", resource: "pods/attach" });
  }
  return [...calls.values()].sort((a, b) => `${a.apiGroup}/${a.resource} ${a.verb}`.localeCompare(`${b.apiGroup}/${b.resource} ${b.verb}`));
}
