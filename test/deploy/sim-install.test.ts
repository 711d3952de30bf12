import { CoreV1Api, KubeConfig, KubernetesObjectApi, type KubernetesObject, type V1Pod } from "@kubernetes/client-node";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { loadKubeConfig } from "../../src/config/kube.ts";
import { runPod } from "../../src/kube/specs/run-pod.ts";
import { startSimulatedCluster, type SimulatedCluster } from "../../src/sim/index.ts";
import { containerEnv, render, runnerDeployment, type K8sObject } from "./render.ts";

/** Kinds of the rendered manifests the simulated apiserver serves; the rest are schema-checked only. */
const NOT_SERVED_BY_SIM = [
  "ClusterRole",
  "ClusterRoleBinding",
  "Deployment",
  "PodDisruptionBudget",
  "LimitRange",
  "NetworkPolicy",
  "Role",
  "RoleBinding",
  "ServiceAccount",
];

/** A client for the simulator's plain-HTTP endpoint (client-node refuses http:// unless told). */
function simKubeConfig(sim: SimulatedCluster): KubeConfig {
  const kc = new KubeConfig();
  kc.loadFromOptions({
    clusters: [{ name: "sim", server: sim.url, skipTLSVerify: true }],
    users: [{ name: "sim", token: "simulated" }],
    contexts: [{ name: "sim", cluster: "sim", user: "sim" }],
    currentContext: "sim",
  });
  return kc;
}

function apiError(error: unknown): { code: number; message: string } {
  const e = error as { code?: number; body?: unknown };
  const body = typeof e.body === "string" ? (JSON.parse(e.body) as { message?: string }) : (e.body as { message?: string });
  return { code: e.code ?? 0, message: body?.message ?? "" };
}

async function refusal(promise: Promise<unknown>): Promise<{ code: number; message: string }> {
  try {
    await promise;
  } catch (error) {
    return apiError(error);
  }
  throw new Error("the apiserver admitted what it should have refused");
}

describe.each(["plain", "build", "gateway", "example"])("overlay %s applied to the simulated cluster", (overlay) => {
  const objects = render(`overlays/${overlay}`);
  const env: Record<string, string> = {};
  for (const [name, variable] of containerEnv(objects, runnerDeployment(objects).spec.template.spec.containers[0]!)) {
    if (variable.value !== undefined) env[name] = variable.value;
  }
  const config = loadKubeConfig(env);
  let sim: SimulatedCluster;
  let core: CoreV1Api;

  beforeAll(async () => {
    // Pods stay in ContainerCreating for the whole test, so each one keeps counting against the quota.
    sim = await startSimulatedCluster({ podStartDelayMs: 3_600_000 });
    const kc = simKubeConfig(sim);
    core = kc.makeApiClient(CoreV1Api);
    const generic = KubernetesObjectApi.makeApiClient(kc);
    const served = objects.filter((o) => !NOT_SERVED_BY_SIM.includes(o.kind));
    // namespaces first, then the quota, then the rest (what kubectl apply's ordering does)
    const order = (o: K8sObject) => (o.kind === "Namespace" ? 0 : o.kind === "ResourceQuota" ? 1 : 2);
    for (const obj of [...served].sort((a, b) => order(a) - order(b))) {
      await generic.create(obj as KubernetesObject);
    }
  });

  afterAll(async () => {
    await sim?.stop();
  });

  it("accepts every object it serves (schema and naming admission)", async () => {
    const kinds = new Set(objects.map((o) => o.kind));
    for (const kind of kinds) {
      if (NOT_SERVED_BY_SIM.includes(kind)) continue;
      for (const o of objects.filter((x) => x.kind === kind && x.metadata.namespace)) {
        const generic = KubernetesObjectApi.makeApiClient(simKubeConfig(sim));
        const stored = await generic.read({
          apiVersion: o.apiVersion,
          kind: o.kind,
          metadata: { name: o.metadata.name, namespace: o.metadata.namespace! },
        });
        expect(stored.metadata?.uid).toBeTruthy();
      }
    }
    const namespaces = await core.listNamespace();
    expect(namespaces.items.map((n) => n.metadata?.name)).toEqual(
      expect.arrayContaining(objects.filter((o) => o.kind === "Namespace").map((o) => o.metadata.name)),
    );
  });

  it("admits RUNNER_MAX_SESSIONS run pods under the session quota and Pod Security, and refuses one more", async () => {
    const max = Number(env.RUNNER_MAX_SESSIONS);
    const podFor = (i: number): V1Pod => {
      const alphabet = "abcdefghijklmnopqrstuvwxyz234567";
      const sessionId = `k7m3qx4r2a${alphabet[Math.floor(i / 32)]}${alphabet[i % 32]}`;
      return runPod({
        session: {
          sessionId,
          mode: "run",
          createdAt: "2026-11-29T16:30:00.000Z",
          apps: [{ name: "app", entryRelativePath: "telo.yaml", ports: [], io: "tty" }],
          inspect: false,
          selfContained: false,
          config: {},
        },
        env: {},
        settings: config.sessionPods,
        limits: config.runCeilings,
        defaultImage: config.defaultImage,
        bundleUrl: `${config.selfUrl}/internal/bundles/${sessionId}?token=${"ab".repeat(24)}`,
      });
    };
    for (let i = 0; i < max; i++) {
      await core.createNamespacedPod({ namespace: config.sessionPods.namespace, body: podFor(i) });
    }
    const over = await refusal(core.createNamespacedPod({ namespace: config.sessionPods.namespace, body: podFor(max) }));
    expect(over.code).toBe(403);
    expect(over.message).toMatch(/exceeded quota: telo-k8s-runner-sessions/);
  });

  it("refuses an unhardened pod in the session namespace with the Pod Security message", async () => {
    const refused = await refusal(
      core.createNamespacedPod({
        namespace: config.sessionPods.namespace,
        body: {
          apiVersion: "v1",
          kind: "Pod",
          metadata: { name: "plain" },
          spec: {
            containers: [
              {
                name: "app",
                image: "busybox",
                resources: { requests: { cpu: "10m", memory: "16Mi" }, limits: { cpu: "10m", memory: "16Mi" } },
              },
            ],
          },
        },
      }),
    );
    expect(refused.code).toBe(403);
    expect(refused.message).toMatch(/^pods "plain" is forbidden: violates PodSecurity "restricted:latest": allowPrivilegeEscalation != false/);
  });
});
