/**
 * A pure RBAC checker: which API requests a set of rules does not allow, and which granted
 * permissions no request used. It evaluates rules the way the Kubernetes RBAC authorizer does for
 * resource requests (verb, API group, resource or resource/subresource, wildcards, namespace
 * scope of Roles vs cluster scope of ClusterRoleBindings), so the manifests can be compared with
 * the calls the runner really makes.
 */
import type { K8sObject } from "./render.ts";

export type PolicyRule = {
  apiGroups?: string[];
  resources?: string[];
  verbs: string[];
  resourceNames?: string[];
  nonResourceURLs?: string[];
};

/**
 * Rules and where they apply: `namespace` for a Role (or a ClusterRole bound by a RoleBinding),
 * undefined for a ClusterRole bound cluster-wide (applies in every namespace and to
 * cluster-scoped resources).
 */
export type ScopedRules = { namespace?: string; rules: PolicyRule[] };

/** One API request, as the simulated apiserver records it (verb = the RBAC verb). */
export type ApiRequest = {
  verb: string;
  apiGroup: string;
  resource: string;
  subresource?: string;
  namespace?: string;
  name?: string;
};

/** One permission: a verb on a group/resource within a scope (namespace; undefined = cluster). */
export type Grant = { namespace?: string; apiGroup: string; resource: string; verb: string };

function matches(values: string[] | undefined, value: string): boolean {
  return (values ?? []).some((v) => v === "*" || v === value);
}

function resourceMatches(resources: string[] | undefined, resource: string, subresource?: string): boolean {
  const full = subresource ? `${resource}/${subresource}` : resource;
  return (resources ?? []).some((r) => {
    if (r === "*" || r === full) return true;
    if (!subresource) return false;
    return r === `${resource}/*` || r === `*/${subresource}`;
  });
}

function ruleAllows(rule: PolicyRule, request: ApiRequest): boolean {
  if (!matches(rule.verbs, request.verb)) return false;
  if (!matches(rule.apiGroups, request.apiGroup)) return false;
  if (!resourceMatches(rule.resources, request.resource, request.subresource)) return false;
  if (rule.resourceNames && rule.resourceNames.length > 0) {
    return request.name !== undefined && rule.resourceNames.includes(request.name);
  }
  return true;
}

function scopeApplies(scope: ScopedRules, request: ApiRequest): boolean {
  return scope.namespace === undefined || scope.namespace === request.namespace;
}

export function isAllowed(scopes: ScopedRules[], request: ApiRequest): boolean {
  return scopes.some((scope) => scopeApplies(scope, request) && scope.rules.some((rule) => ruleAllows(rule, request)));
}

/** The requests no rule allows (each distinct request once). */
export function requestsNotAllowedBy(scopes: ScopedRules[], requests: ApiRequest[]): ApiRequest[] {
  const seen = new Set<string>();
  const denied: ApiRequest[] = [];
  for (const request of requests) {
    const key = JSON.stringify([request.verb, request.apiGroup, request.resource, request.subresource, request.namespace]);
    if (seen.has(key)) continue;
    seen.add(key);
    if (!isAllowed(scopes, request)) denied.push(request);
  }
  return denied;
}

/**
 * The permissions the rules grant that no request exercised. Each rule is expanded into its
 * (group, resource, verb) grants within its scope; a wildcard stays a single `*` grant that counts
 * as exercised when any request falls under it.
 */
export function rulesNotExercised(scopes: ScopedRules[], requests: ApiRequest[]): Grant[] {
  const unused: Grant[] = [];
  for (const scope of scopes) {
    for (const rule of scope.rules) {
      for (const apiGroup of rule.apiGroups ?? []) {
        for (const resource of rule.resources ?? []) {
          for (const verb of rule.verbs) {
            const single: PolicyRule = { apiGroups: [apiGroup], resources: [resource], verbs: [verb] };
            if (rule.resourceNames) single.resourceNames = rule.resourceNames;
            const used = requests.some((r) => scopeApplies(scope, r) && ruleAllows(single, r));
            if (!used) {
              unused.push({ ...(scope.namespace !== undefined && { namespace: scope.namespace }), apiGroup, resource, verb });
            }
          }
        }
      }
    }
  }
  return unused;
}

type RoleObject = K8sObject & { rules?: PolicyRule[] };
type BindingObject = K8sObject & {
  roleRef: { apiGroup: string; kind: "Role" | "ClusterRole"; name: string };
  subjects?: Array<{ kind: string; name: string; namespace?: string; apiGroup?: string }>;
};

/**
 * The rules a ServiceAccount holds through the Roles, ClusterRoles and bindings among `objects`
 * (what `kubectl apply` of these manifests grants it; built-in roles are not included).
 */
export function rulesForServiceAccount(objects: K8sObject[], namespace: string, name: string): ScopedRules[] {
  const scopes: ScopedRules[] = [];
  const isSubject = (b: BindingObject) =>
    (b.subjects ?? []).some((s) => s.kind === "ServiceAccount" && s.name === name && s.namespace === namespace);
  const roleRules = (kind: string, roleName: string, roleNamespace?: string): PolicyRule[] => {
    const role = objects.find(
      (o) =>
        o.kind === kind &&
        o.metadata.name === roleName &&
        (kind === "ClusterRole" || o.metadata.namespace === roleNamespace),
    ) as RoleObject | undefined;
    if (!role) throw new Error(`binding refers to a missing ${kind} ${roleName}`);
    return role.rules ?? [];
  };
  for (const o of objects) {
    if (o.kind === "RoleBinding") {
      const b = o as BindingObject;
      if (!isSubject(b)) continue;
      scopes.push({ namespace: b.metadata.namespace, rules: roleRules(b.roleRef.kind, b.roleRef.name, b.metadata.namespace) });
    } else if (o.kind === "ClusterRoleBinding") {
      const b = o as BindingObject;
      if (!isSubject(b)) continue;
      scopes.push({ rules: roleRules("ClusterRole", b.roleRef.name) });
    }
  }
  return scopes;
}
