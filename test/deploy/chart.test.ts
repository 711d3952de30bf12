/**
 * The Helm chart renders the same objects as the kustomize install: `helm template` of the
 * release k8s/base's names belong to (release telo-k8s-runner in telo-runner, session namespace
 * telo-sessions) equals k8s/base with the chart's defaults, and each overlay with
 * ci/<overlay>-values.yaml, object for object, but for the differences helm.ts names as
 * deliberate. Beyond that, what a chart operators install with their own values must do: names
 * and namespaces from the release, values that win over the templates' own settings, a schema
 * that refuses bad values, the network ranges the session policy leaves out, a test hook.
 */
import { execFileSync } from "node:child_process";
import { createHash } from "node:crypto";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parse } from "yaml";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { enforcedLevel, podSecurityViolations, type PodLike } from "../../src/sim/admission/pod-security.ts";
import { chartAsKustomize, comparable, differences, helmBinary, helmTemplate, KUSTOMIZE_NAMES, kustomizeAsChart, type Release } from "./helm.ts";
import { containerEnv, type Deployment, find, type K8sObject, one, OVERLAYS, REPO_ROOT, render, runnerDeployment } from "./render.ts";

let helm: string;

// A cold build of helm takes minutes on two cores; the cache makes every later run instant.
beforeAll(() => {
  helm = helmBinary();
}, 30 * 60_000);

const CLUSTER_SCOPED = new Set(["Namespace", "ClusterRole", "ClusterRoleBinding"]);

type Policy = K8sObject & { spec: { podSelector: { matchLabels: Record<string, string> }; egress: Array<{ to?: Array<{ ipBlock?: { cidr: string; except?: string[] } }> }> } };

/** The chart's objects for a release, the test hook included. */
function release(release: Release, valuesFiles?: string | string[], sets: string[] = []): K8sObject[] {
  return helmTemplate(helm, valuesFiles, sets, release);
}

let scratch: string;
beforeAll(() => {
  scratch = mkdtempSync(join(tmpdir(), "chart-values-"));
});
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

/** A values file of the test's own (JSON is YAML), for values `--set` would parse. */
function valuesFile(values: object): string {
  const file = join(scratch, `values-${createHash("sha256").update(JSON.stringify(values)).digest("hex").slice(0, 12)}.json`);
  writeFileSync(file, JSON.stringify(values));
  return file;
}

/** The release's one Deployment, whatever the release's name makes its name. */
function deploymentOf(objects: K8sObject[]): Deployment {
  return one(objects, "Deployment") as Deployment;
}

/** The value each runner variable has in the api container (both containers read the same). */
function effectiveEnv(objects: K8sObject[]): Map<string, string | undefined> {
  const [api, supervisor] = deploymentOf(objects).spec.template.spec.containers;
  const read = (c: typeof api) => new Map([...containerEnv(objects, c!)].map(([name, v]) => [name, v.value ?? JSON.stringify(v.valueFrom)]));
  expect(read(supervisor)).toEqual(read(api));
  return read(api);
}

function sessionPolicy(objects: K8sObject[]): Policy {
  const [policy] = find(objects, "NetworkPolicy").filter((o) => !o.metadata.name.endsWith("-build-egress"));
  return policy as Policy;
}

function openEgress(policy: Policy): string[] {
  const open = policy.spec.egress.flatMap((rule) => rule.to ?? []).filter((peer) => peer.ipBlock?.cidr === "0.0.0.0/0");
  expect(open).toHaveLength(1);
  return open[0]!.ipBlock!.except ?? [];
}

/** `helm <args>`; its output when it fails (lint reports on stdout), undefined when it succeeds. */
function helmRefusal(args: string[]): string | undefined {
  try {
    execFileSync(helm, args, { cwd: REPO_ROOT, stdio: "pipe" });
    return undefined;
  } catch (error) {
    const { stdout, stderr } = error as { stdout?: Buffer; stderr?: Buffer };
    return `${String(stdout ?? "")}${String(stderr ?? error)}`;
  }
}

describe("helm chart", () => {
  it("renders k8s/base with its default values", () => {
    const chart = helmTemplate(helm, undefined, KUSTOMIZE_NAMES);
    expect(differences(comparable(kustomizeAsChart(render("base"))), comparable(chartAsKustomize(chart)))).toEqual([]);
  });

  for (const overlay of OVERLAYS) {
    it(`renders overlay ${overlay} with ci/${overlay}-values.yaml`, () => {
      const chart = helmTemplate(helm, `k8s/chart/ci/${overlay}-values.yaml`, [...KUSTOMIZE_NAMES, "build.namespace=telo-builds"]);
      expect(differences(comparable(kustomizeAsChart(render(`overlays/${overlay}`))), comparable(chartAsKustomize(chart)))).toEqual([]);
    });
  }

  it("labels every object as managed by Helm and rolls the pod when its configuration changes", () => {
    const objects = helmTemplate(helm, "k8s/chart/ci/example-values.yaml");
    for (const o of objects) expect(o.metadata.labels?.["app.kubernetes.io/managed-by"], o.metadata.name).toBe("Helm");
    const annotations = (values: string) =>
      (runnerDeployment(helmTemplate(helm, values)).spec.template.metadata as { annotations?: Record<string, string> }).annotations ?? {};
    const checksums = Object.keys(annotations("k8s/chart/ci/example-values.yaml")).filter((key) => key.startsWith("checksum/"));
    expect(checksums.sort()).toEqual(["checksum/apps", "checksum/env", "checksum/terms"]);
    expect(annotations("k8s/chart/ci/plain-values.yaml")).not.toEqual(annotations("k8s/chart/ci/build-values.yaml"));
  });

  it("takes the apps catalog from an existing Secret and creates none", () => {
    const objects = helmTemplate(helm, "k8s/chart/ci/example-values.yaml", ["appsCatalog.existingSecret=my-catalog"]);
    expect(objects.filter((o) => o.kind === "Secret")).toEqual([]);
    const deployment = runnerDeployment(objects);
    for (const container of deployment.spec.template.spec.containers) {
      expect(container.env?.[0]).toEqual({ name: "RUNNER_APPS", valueFrom: { secretKeyRef: { name: "my-catalog", key: "RUNNER_APPS" } } });
    }
  });

  it("renders the single-replica install with replicas: 1: Recreate, no replica settings, the bundle URL through the Service", () => {
    const deployment = runnerDeployment(helmTemplate(helm, undefined, ["replicas=1"]));
    expect(deployment.spec.replicas).toBe(1);
    expect(deployment.spec.strategy).toEqual({ type: "Recreate" });
    for (const container of deployment.spec.template.spec.containers) {
      expect(container.env).toEqual([{ name: "RUNNER_SELF_URL", value: "http://telo-k8s-runner.telo-runner.svc:8063" }]);
      expect(container.ports?.map((port) => port.name)).not.toContain("peer");
    }
  });

  it("passes helm lint --strict with every values file", () => {
    for (const values of [undefined, ...OVERLAYS.map((o) => `k8s/chart/ci/${o}-values.yaml`)]) {
      const args = ["lint", "--strict", "k8s/chart", "--namespace", "telo-runner", ...(values ? ["-f", values] : [])];
      expect(helmRefusal(args), values ?? "defaults").toBeUndefined();
    }
  });

  it("carries the package version as chart, app and image version", () => {
    const { version } = JSON.parse(readFileSync(join(REPO_ROOT, "package.json"), "utf8")) as { version: string };
    const chart = parse(readFileSync(join(REPO_ROOT, "k8s/chart/Chart.yaml"), "utf8")) as { version: string; appVersion: string };
    const values = parse(readFileSync(join(REPO_ROOT, "k8s/chart/values.yaml"), "utf8")) as { image: { tag: string } };
    expect([chart.version, chart.appVersion, values.image.tag]).toEqual([version, version, version]);
  });
});

describe("helm chart: names and namespaces from the release", () => {
  it("puts the runner in the release's namespace, names everything after the release, and derives the session namespace", () => {
    const objects = release({ name: "prod", namespace: "telo" }, "k8s/chart/ci/build-values.yaml");
    // No Namespace for the release's own: helm needs it before it creates anything.
    expect(find(objects, "Namespace").map((n) => n.metadata.name).sort()).toEqual(["prod-telo-k8s-runner-builds", "prod-telo-k8s-runner-sessions"]);
    const namespaces = new Set(["telo", "prod-telo-k8s-runner-sessions", "prod-telo-k8s-runner-builds"]);
    for (const o of objects) {
      const hook = o.metadata.annotations?.["helm.sh/hook"] !== undefined;
      if (CLUSTER_SCOPED.has(o.kind)) expect(o.metadata.namespace, `${o.kind}/${o.metadata.name}`).toBeUndefined();
      else expect(namespaces, `${o.kind}/${o.metadata.name}`).toContain(o.metadata.namespace);
      expect(o.metadata.name, `${o.kind}/${o.metadata.name}`).toMatch(/^prod-telo-k8s-runner(-|$)/);
      expect(o.metadata.labels).toMatchObject({ ...(hook ? {} : { "app.kubernetes.io/name": "telo-k8s-runner" }), "app.kubernetes.io/instance": "prod" });
    }
    expect(find(objects, "ClusterRole").map((o) => o.metadata.name)).toEqual(["prod-telo-k8s-runner-telo-probe"]);
    const deployment = deploymentOf(objects);
    expect(deployment.metadata).toMatchObject({ name: "prod-telo-k8s-runner", namespace: "telo" });
    expect(deployment.spec.selector.matchLabels).toEqual({ "app.kubernetes.io/name": "telo-k8s-runner", "app.kubernetes.io/instance": "prod" });
    const env = effectiveEnv(objects);
    expect(env.get("RUNNER_SESSION_NAMESPACE")).toBe("prod-telo-k8s-runner-sessions");
    expect(env.get("RUNNER_BUILD_NAMESPACE")).toBe("prod-telo-k8s-runner-builds");
    expect(env.get("RUNNER_OWNER_ID")).toBe("telo.prod");
    // The RoleBindings name the release's ServiceAccount in the release's namespace.
    for (const binding of [...find(objects, "RoleBinding"), ...find(objects, "ClusterRoleBinding")]) {
      expect((binding as K8sObject & { subjects: unknown[] }).subjects).toEqual([{ kind: "ServiceAccount", name: "prod-telo-k8s-runner", namespace: "telo" }]);
    }
    // The session policy lets the release's namespace in, and out only to the release's runner pods.
    const policy = sessionPolicy(objects) as Policy & { spec: { ingress: Array<{ from: Array<{ namespaceSelector: { matchLabels: Record<string, string> } }> }> } };
    expect(policy.spec.ingress[0]!.from[0]!.namespaceSelector.matchLabels).toEqual({ "kubernetes.io/metadata.name": "telo" });
    expect(JSON.stringify(policy.spec.egress)).toContain(JSON.stringify({ namespaceSelector: { matchLabels: { "kubernetes.io/metadata.name": "telo" } }, podSelector: { matchLabels: deployment.spec.selector.matchLabels } }));
  });

  it("makes the session and build namespaces settable, and the objects follow the variable the runner reads", () => {
    for (const sets of [["sessionNamespace=sessions-a", "build.namespace=builds-a"], ["env.RUNNER_SESSION_NAMESPACE=sessions-a", "env.RUNNER_BUILD_NAMESPACE=builds-a", "sessionNamespace=ignored"]]) {
      const objects = release({ name: "a", namespace: "runner-a" }, "k8s/chart/ci/build-values.yaml", sets);
      const env = effectiveEnv(objects);
      expect([env.get("RUNNER_SESSION_NAMESPACE"), env.get("RUNNER_BUILD_NAMESPACE")], sets.join(" ")).toEqual(["sessions-a", "builds-a"]);
      expect(find(objects, "Namespace").map((n) => n.metadata.name).sort()).toEqual(["builds-a", "sessions-a"]);
      for (const kind of ["Role", "RoleBinding", "NetworkPolicy"]) {
        expect(new Set(find(objects, kind).map((o) => o.metadata.namespace)), kind).toEqual(new Set(["sessions-a", "builds-a"]));
      }
    }
    const unmanaged = release({ name: "a", namespace: "runner-a" }, undefined, ["createNamespaces=false"]);
    expect(find(unmanaged, "Namespace")).toEqual([]);
  });

  for (const [title, second] of [
    ["in another namespace", { name: "staging", namespace: "telo-staging" }],
    ["in the same namespace", { name: "staging", namespace: "telo-runner" }],
    ["of the same name in another namespace", { name: "telo-k8s-runner", namespace: "telo-staging" }],
  ] as const) {
    it(`renders two releases ${title} with no object, cluster-scoped name or owner id in common`, () => {
      const [a, b] = [release({}, "k8s/chart/ci/build-values.yaml"), release(second, "k8s/chart/ci/build-values.yaml")];
      const keys = (objects: K8sObject[]) => new Set(objects.map((o) => `${o.kind} ${o.metadata.namespace ?? ""}/${o.metadata.name}`));
      const [keysA, keysB] = [keys(a), keys(b)];
      const common = [...keysA].filter((key) => keysB.has(key));
      // Releases of one name in two namespaces share the default session namespace name, which
      // helm refuses to give the second (owned by the first): a value must set one of them.
      if (second.name === "telo-k8s-runner") {
        expect(common.sort()).toEqual(expect.arrayContaining(["Namespace /telo-k8s-runner-sessions"]));
        const c = release(second, "k8s/chart/ci/build-values.yaml", ["sessionNamespace=telo-staging-sessions", "build.namespace=telo-staging-builds"]);
        expect([...keys(c)].filter((key) => keysA.has(key))).toEqual([]);
      } else {
        expect(common).toEqual([]);
      }
      const [envA, envB] = [effectiveEnv(a), effectiveEnv(b)];
      expect(envA.get("RUNNER_OWNER_ID")).not.toBe(envB.get("RUNNER_OWNER_ID"));
      // In one namespace, neither release's Service selects the other's runner pods (a
      // Service selects in its own namespace only).
      if (second.namespace !== "telo-runner") return;
      const podLabels = (objects: K8sObject[]) => deploymentOf(objects).spec.template.metadata.labels;
      const selects = (selector: Record<string, string>, labels: Record<string, string>) => Object.entries(selector).every(([k, v]) => labels[k] === v);
      const serviceSelector = (objects: K8sObject[]) => (one(objects, "Service") as K8sObject & { spec: { selector: Record<string, string> } }).spec.selector;
      expect(selects(serviceSelector(a), podLabels(b))).toBe(false);
      expect(selects(serviceSelector(b), podLabels(a))).toBe(false);
    });
  }

  it("names the owner identity of long release names within a label's 63 characters, still apart", () => {
    const namespace = "n".repeat(40);
    const [a, b] = ["a", "b"].map((suffix) => effectiveEnv(release({ name: `${"r".repeat(30)}${suffix}`, namespace })).get("RUNNER_OWNER_ID")!);
    for (const id of [a, b]) expect(id).toMatch(/^[A-Za-z0-9]([-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?$/);
    expect(a).not.toBe(b);
  });
});

describe("helm chart: values win over the templates' own settings", () => {
  it("takes RUNNER_SELF_URL from values, with one replica and with several", () => {
    for (const replicas of [1, 3]) {
      const objects = release({ name: "prod", namespace: "telo" }, undefined, [`replicas=${replicas}`, "env.RUNNER_SELF_URL=http://runner.example.internal:8063"]);
      expect(effectiveEnv(objects).get("RUNNER_SELF_URL"), `replicas ${replicas}`).toBe("http://runner.example.internal:8063");
      for (const container of deploymentOf(objects).spec.template.spec.containers) {
        expect((container.env ?? []).map((e) => e.name)).not.toContain("RUNNER_SELF_URL");
      }
    }
  });

  it("defaults RUNNER_SELF_URL to the release's Service by name with one replica, each pod's address with several", () => {
    expect(effectiveEnv(release({ name: "prod", namespace: "telo" }, undefined, ["replicas=1"])).get("RUNNER_SELF_URL")).toBe("http://prod-telo-k8s-runner.telo.svc:8063");
    const moved = release({ name: "prod", namespace: "telo" }, undefined, ["replicas=1", "env.RUNNER_BUNDLE_PORT=9063"]);
    expect(effectiveEnv(moved).get("RUNNER_SELF_URL")).toBe("http://prod-telo-k8s-runner.telo.svc:9063");
    const service = one(moved, "Service") as K8sObject & { spec: { ports: Array<{ name: string; port: number }> } };
    expect(service.spec.ports.find((p) => p.name === "bundles")?.port).toBe(9063);
  });

  it("lets a values env entry win over every variable the chart sets itself", () => {
    // Every feature on, so that each variable the templates can set is set.
    const features = "k8s/chart/ci/example-values.yaml";
    const base = release({ name: "prod", namespace: "telo" }, features);
    const overrides: Record<string, string> = {
      RUNNER_APPS: "{}",
      RUNNER_REPLICA_ID: "replica-x",
      RUNNER_PEER_ADVERTISE: "10.1.2.3:8065",
      RUNNER_PEER_LISTEN: "0.0.0.0:9065",
      RUNNER_SELF_URL: "http://elsewhere:8063",
      RUNNER_OWNER_ID: "owner-x",
      RUNNER_SESSION_NAMESPACE: "sessions-x",
      SESSION_ROUTING_MODE: "gateway",
      RUNNER_TERMS_FILE: "/elsewhere/terms.md",
      RUNNER_WATCH_SESSIONS: "false",
    };
    // What the templates set besides the values' env, found rather than listed: each must be here.
    const valuesEnv = parse(readFileSync(join(REPO_ROOT, features), "utf8")) as { env: Record<string, string> };
    const defaults = parse(readFileSync(join(REPO_ROOT, "k8s/chart/values.yaml"), "utf8")) as { env: Record<string, string> };
    const chartSet = [...effectiveEnv(base).keys()].filter((name) => !(name in valuesEnv.env) && !(name in defaults.env) && name !== "POD_IP");
    expect(chartSet.sort()).toEqual(Object.keys(overrides).sort());
    const env = effectiveEnv(release({ name: "prod", namespace: "telo" }, [features, valuesFile({ env: overrides })]));
    for (const [name, value] of Object.entries(overrides)) expect(env.get(name), name).toBe(value);
  });
});

describe("helm chart: values.schema.json", () => {
  const refused: Array<[string, string[]]> = [
    ["a node range that is not an IPv4 CIDR", ["networkPolicy.nodeCIDRs={10.0.0.0}"]],
    ["a control-plane range that is not an IPv4 CIDR", ["networkPolicy.controlPlaneCIDRs={2001:db8::/64}"]],
    ["no replica", ["replicas=0"]],
    ["an unknown routing layer", ["routing.layer=istio"]],
    ["a RUNNER_SELF_URL that is not an http(s) URL", ["env.RUNNER_SELF_URL=telo-k8s-runner:8063"]],
    ["a session namespace that is not a DNS label", ["sessionNamespace=Telo_Sessions"]],
    ["an owner id that is not a label value", ["env.RUNNER_OWNER_ID=-owner"]],
    ["a key the chart does not know (the former top-level blockedEgress)", ["blockedEgress={10.0.0.0/8}"]],
    ["an env value that is not a scalar", ["env.RUNNER_DISPLAY_NAME.nested=x"]],
  ];
  // helm install validates the same way, but needs a cluster before it gets there: the
  // real-cluster tier's releases.test.ts has an install refused.
  it.each(refused)("refuses %s in helm template and helm lint --strict", (_, sets) => {
    const args = sets.flatMap((set) => ["--set", set]);
    for (const command of [
      ["template", "r", "k8s/chart", ...args],
      ["lint", "--strict", "k8s/chart", ...args],
    ]) {
      expect(helmRefusal(command), command[0]).toMatch(/values don't meet the specifications of the schema/);
    }
  });

  it("accepts the values files and the node and control-plane ranges", () => {
    expect(helmRefusal(["lint", "--strict", "k8s/chart", "--set", "networkPolicy.nodeCIDRs={203.0.113.0/24}", "--set", "networkPolicy.controlPlaneCIDRs={198.51.100.7/32}"])).toBeUndefined();
  });
});

describe("helm chart: the session NetworkPolicy's ranges", () => {
  it("leaves the given node and control-plane ranges out of the session pods' internet egress, with the blocked ones", () => {
    const objects = release({}, undefined, ["networkPolicy.nodeCIDRs={203.0.113.0/24,198.51.100.0/28}", "networkPolicy.controlPlaneCIDRs={192.0.2.10/32,10.0.0.0/8}"]);
    const except = openEgress(sessionPolicy(objects));
    expect(except).toEqual(["169.254.169.254/32", "10.0.0.0/8", "172.16.0.0/12", "192.168.0.0/16", "100.64.0.0/10", "203.0.113.0/24", "198.51.100.0/28", "192.0.2.10/32"]);
    // By default, exactly k8s/base's list.
    expect(openEgress(sessionPolicy(release({})))).toEqual(openEgress(one(render("base"), "NetworkPolicy") as Policy));
  });

  it("selects the session pods by the runner's managed-by value, which follows RUNNER_MANAGED_BY", () => {
    expect(sessionPolicy(release({})).spec.podSelector.matchLabels).toEqual({ "app.kubernetes.io/managed-by": "telo-k8s-runner" });
    const objects = release({}, "k8s/chart/ci/build-values.yaml", ["env.RUNNER_MANAGED_BY=telo-staging"]);
    for (const policy of find(objects, "NetworkPolicy") as Policy[]) expect(policy.spec.podSelector.matchLabels).toEqual({ "app.kubernetes.io/managed-by": "telo-staging" });
  });
});

describe("helm chart: the helm test hook", () => {
  for (const r of [{}, { name: "staging", namespace: "telo-staging" }] as Release[]) {
    it(`checks /v1/ready of the release's own Service (${r.name ?? "telo-k8s-runner"})`, () => {
      const objects = release(r, undefined, ["env.PORT=9062", "env.RUNNER_INIT_IMAGE=registry.example/busybox:1"]);
      const hooks = objects.filter((o) => o.metadata.annotations?.["helm.sh/hook"] === "test");
      expect(hooks.map((o) => o.kind)).toEqual(["Pod"]);
      const pod = hooks[0] as K8sObject & PodLike & { spec: { containers: Array<{ image: string; command: string[]; env: Array<{ name: string; value: string }> }> } };
      const service = one(objects, "Service") as K8sObject & { spec: { selector: Record<string, string>; ports: Array<{ name: string; port: number }> } };
      const port = service.spec.ports.find((p) => p.name === "http")!.port;
      expect(port).toBe(9062);
      const [container] = pod.spec.containers;
      expect(container!.command).toEqual(["sh", "-c", 'wget -q -O- "$READY_URL"']);
      expect(container!.env).toEqual([{ name: "READY_URL", value: `http://${service.metadata.name}.${service.metadata.namespace}.svc:${port}/v1/ready` }]);
      expect(container!.image).toBe("registry.example/busybox:1");
      expect(pod.metadata.namespace).toBe(service.metadata.namespace);
      // Not one of the Service's endpoints, and admitted where the runner pod is.
      expect(Object.entries(service.spec.selector).every(([k, v]) => pod.metadata.labels?.[k] === v)).toBe(false);
      expect(podSecurityViolations(enforcedLevel({ "pod-security.kubernetes.io/enforce": "restricted" }), pod)).toEqual([]);
    });
  }

  it("lives under templates/tests/, where helm lint and chart readers look for it", () => {
    expect(readFileSync(join(REPO_ROOT, "k8s/chart/templates/tests/ready.yaml"), "utf8")).toMatch(/helm\.sh\/hook: test/);
  });
});
