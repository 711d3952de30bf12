import { describe, expect, it } from "vitest";
import { render } from "./render.ts";
import {
  isAllowed,
  requestsNotAllowedBy,
  rulesForServiceAccount,
  rulesNotExercised,
  type ApiRequest,
  type ScopedRules,
} from "./rbac.ts";

const SESSIONS = "telo-sessions";

describe("RBAC checker", () => {
  const scopes: ScopedRules[] = [
    {
      namespace: SESSIONS,
      rules: [
        { apiGroups: [""], resources: ["pods"], verbs: ["get", "list"] },
        { apiGroups: [""], resources: ["pods/attach"], verbs: ["create"] },
      ],
    },
    { rules: [{ apiGroups: [""], resources: ["namespaces"], verbs: ["get"] }] },
  ];

  it("allows a request matching verb, group, resource and namespace", () => {
    expect(isAllowed(scopes, { verb: "get", apiGroup: "", resource: "pods", namespace: SESSIONS })).toBe(true);
  });

  it("keeps a Role to its namespace and a ClusterRoleBinding cluster-wide", () => {
    expect(isAllowed(scopes, { verb: "get", apiGroup: "", resource: "pods", namespace: "default" })).toBe(false);
    expect(isAllowed(scopes, { verb: "get", apiGroup: "", resource: "namespaces" })).toBe(true);
    expect(isAllowed(scopes, { verb: "get", apiGroup: "", resource: "namespaces", namespace: "anywhere" })).toBe(true);
  });

  it("treats a subresource as its own resource", () => {
    expect(isAllowed(scopes, { verb: "create", apiGroup: "", resource: "pods", subresource: "attach", namespace: SESSIONS })).toBe(true);
    expect(isAllowed(scopes, { verb: "get", apiGroup: "", resource: "pods", subresource: "log", namespace: SESSIONS })).toBe(false);
    expect(isAllowed(scopes, { verb: "create", apiGroup: "", resource: "pods", namespace: SESSIONS })).toBe(false);
  });

  it("honours wildcards and resourceNames", () => {
    const wide: ScopedRules[] = [
      { namespace: SESSIONS, rules: [{ apiGroups: ["*"], resources: ["pods/*"], verbs: ["*"] }] },
      { namespace: SESSIONS, rules: [{ apiGroups: [""], resources: ["configmaps"], verbs: ["get"], resourceNames: ["only"] }] },
    ];
    expect(isAllowed(wide, { verb: "delete", apiGroup: "", resource: "pods", subresource: "exec", namespace: SESSIONS })).toBe(true);
    expect(isAllowed(wide, { verb: "delete", apiGroup: "", resource: "pods", namespace: SESSIONS })).toBe(false);
    expect(isAllowed(wide, { verb: "get", apiGroup: "", resource: "configmaps", namespace: SESSIONS, name: "only" })).toBe(true);
    expect(isAllowed(wide, { verb: "get", apiGroup: "", resource: "configmaps", namespace: SESSIONS, name: "other" })).toBe(false);
  });

  it("lists each denied request once", () => {
    const requests: ApiRequest[] = [
      { verb: "get", apiGroup: "", resource: "pods", namespace: SESSIONS },
      { verb: "delete", apiGroup: "", resource: "pods", namespace: SESSIONS },
      { verb: "delete", apiGroup: "", resource: "pods", namespace: SESSIONS },
      { verb: "list", apiGroup: "", resource: "secrets", namespace: SESSIONS },
    ];
    expect(requestsNotAllowedBy(scopes, requests)).toEqual([
      { verb: "delete", apiGroup: "", resource: "pods", namespace: SESSIONS },
      { verb: "list", apiGroup: "", resource: "secrets", namespace: SESSIONS },
    ]);
  });

  it("lists the grants no request used", () => {
    const requests: ApiRequest[] = [
      { verb: "get", apiGroup: "", resource: "pods", namespace: SESSIONS },
      { verb: "get", apiGroup: "", resource: "namespaces" },
    ];
    expect(rulesNotExercised(scopes, requests)).toEqual([
      { namespace: SESSIONS, apiGroup: "", resource: "pods", verb: "list" },
      { namespace: SESSIONS, apiGroup: "", resource: "pods/attach", verb: "create" },
    ]);
    // a request in another namespace does not exercise a Role
    expect(
      rulesNotExercised(scopes, [{ verb: "list", apiGroup: "", resource: "pods", namespace: "default" }]),
    ).toContainEqual({ namespace: SESSIONS, apiGroup: "", resource: "pods", verb: "list" });
  });
});

describe("the runner's RBAC in the manifests", () => {
  const plain = rulesForServiceAccount(render("overlays/plain"), "telo-runner", "telo-k8s-runner");
  const build = rulesForServiceAccount(render("overlays/build"), "telo-runner", "telo-k8s-runner");

  const verbs = (list: string) => list.split(" ");
  const sessionCalls = (verbList: string, apiGroup: string, resource: string, subresource?: string): ApiRequest[] =>
    verbs(verbList).map((verb) => ({ verb, apiGroup, resource, ...(subresource && { subresource }), namespace: SESSIONS }));

  /**
   * The calls the runner makes (rbac-calls.test.ts derives them from the simulated cluster's
   * records and from the source; this table keeps the manifests readable against them).
   */
  const SESSION_AND_CLUSTER_CALLS: ApiRequest[] = [
    ...sessionCalls("list watch create update delete", "", "pods"),
    ...sessionCalls("get create update", "", "services"),
    ...sessionCalls("get", "", "pods", "log"),
    ...sessionCalls("get create", "", "pods", "attach"),
    ...sessionCalls("get list create delete", "", "configmaps"),
    ...sessionCalls("get list create update delete", "", "secrets"),
    ...sessionCalls("get create update delete", "networking.k8s.io", "ingresses"),
    ...sessionCalls("get list create update delete", "gateway.networking.k8s.io", "httproutes"),
    ...sessionCalls("get list create update delete", "coordination.k8s.io", "leases"),
    { verb: "get", apiGroup: "", resource: "namespaces" },
    { verb: "list", apiGroup: "", resource: "namespaces" },
    { verb: "list", apiGroup: "networking.k8s.io", resource: "ingressclasses" },
  ];
  const BUILD_CALLS: ApiRequest[] = [
    ...verbs("get create").map((verb) => ({ verb, apiGroup: "batch", resource: "jobs", namespace: "telo-builds" })),
    { verb: "list", apiGroup: "", resource: "pods", namespace: "telo-builds" },
    { verb: "get", apiGroup: "", resource: "pods", subresource: "log", namespace: "telo-builds" },
  ];

  it("grants exactly the session and cluster calls, and the build calls only with the build path", () => {
    expect(requestsNotAllowedBy(plain, SESSION_AND_CLUSTER_CALLS)).toEqual([]);
    expect(rulesNotExercised(plain, SESSION_AND_CLUSTER_CALLS)).toEqual([]);
    expect(requestsNotAllowedBy(plain, BUILD_CALLS)).toEqual(BUILD_CALLS);
    expect(requestsNotAllowedBy(build, [...SESSION_AND_CLUSTER_CALLS, ...BUILD_CALLS])).toEqual([]);
    expect(rulesNotExercised(build, [...SESSION_AND_CLUSTER_CALLS, ...BUILD_CALLS])).toEqual([]);
  });

  it("grants Secrets only in the session namespace (workload tokens), and never exec, proxy, patch, wildcards or privilege escalation verbs", () => {
    for (const overlay of ["plain", "build", "gateway", "example"]) {
      const scopes = rulesForServiceAccount(render(`overlays/${overlay}`), "telo-runner", "telo-k8s-runner");
      for (const scope of scopes) if (scope.namespace !== SESSIONS) for (const rule of scope.rules) expect(rule.resources).not.toContain("secrets");
      for (const rule of scopes.flatMap((s) => s.rules)) {
        expect(rule.resources).not.toContain("pods/exec");
        expect(rule.resources).not.toContain("pods/proxy");
        for (const field of [rule.apiGroups, rule.resources, rule.verbs]) expect(field).not.toContain("*");
        for (const verb of ["patch", "escalate", "bind", "impersonate", "deletecollection"]) expect(rule.verbs).not.toContain(verb);
      }
      // The runner's own namespace and the build namespace (registry credentials) stay out of reach.
      for (const secretCall of ["get", "list", "watch"]) {
        expect(isAllowed(scopes, { verb: secretCall, apiGroup: "", resource: "secrets", namespace: "telo-runner" })).toBe(false);
        expect(isAllowed(scopes, { verb: secretCall, apiGroup: "", resource: "secrets", namespace: "telo-builds" })).toBe(false);
      }
      expect(isAllowed(scopes, { verb: "watch", apiGroup: "", resource: "secrets", namespace: SESSIONS })).toBe(false);
    }
  });

  it("keeps namespaced rights inside the session and build namespaces", () => {
    const scopes = rulesForServiceAccount(render("overlays/build"), "telo-runner", "telo-k8s-runner");
    expect(scopes.map((s) => s.namespace ?? "(cluster)").sort()).toEqual(["(cluster)", "telo-builds", "telo-sessions"]);
    const cluster = scopes.find((s) => s.namespace === undefined)!;
    for (const rule of cluster.rules) for (const verb of rule.verbs) expect(["get", "list"]).toContain(verb);
  });
});
