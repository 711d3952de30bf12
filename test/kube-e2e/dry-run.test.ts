/**
 * Every object the builders can produce, in every configuration (test/kube/specs/builder-matrix.ts),
 * created with `dryRun=All` and `fieldValidation=Strict` in the namespace it goes to: the
 * apiserver's own validation, defaulting and admission (Pod Security, quota, limits, runtime class)
 * accept it. Runs on the simulated cluster in `npm test` and on the real one in
 * `npm run test:cluster`.
 */
import { BatchV1Api, CustomObjectsApi, NetworkingV1Api, NodeV1Api, type V1ConfigMap, type V1Ingress, type V1Job, type V1Pod, type V1Service } from "@kubernetes/client-node";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type ClusterRunner, ON_REAL_CLUSTER, startClusterRunner } from "../support/kube-runner.ts";
import { FULL_SETTINGS } from "../kube/fixtures.ts";
import { type BuiltObject, builtObjects } from "../kube/specs/builder-matrix.ts";

const DRY = { dryRun: "All", fieldValidation: "Strict" } as const;

describe(`builder objects dry-run created on the ${ON_REAL_CLUSTER ? "real" : "simulated"} cluster`, () => {
  let runner: ClusterRunner;
  beforeAll(async () => {
    runner = await startClusterRunner();
    // Build Jobs go to the build namespace, which the build overlay creates and k8s/base does not.
    await runner.core
      .createNamespace({ body: { metadata: { name: "telo-builds", labels: { "pod-security.kubernetes.io/enforce": "baseline" } } } })
      .catch((error: { code?: number }) => {
        if (error.code !== 409) throw error;
      });
    // The RuntimeClass the full settings name exists, as an operator who sets RUNNER_RUNTIME_CLASS
    // has made it (the real cluster's fixture makes its own); a missing one is refused (403).
    if (!ON_REAL_CLUSTER) {
      await runner.kubeConfig
        .makeApiClient(NodeV1Api)
        .createRuntimeClass({ body: { metadata: { name: FULL_SETTINGS.runtimeClass }, handler: "runsc" } });
    }
  });
  afterAll(async () => {
    await runner?.close();
  });

  async function dryCreate(built: BuiltObject): Promise<{ metadata?: { name?: string } }> {
    const namespace = built.namespace;
    switch (built.builder) {
      case "run pod":
      case "pool pod":
      case "app pod":
      case "watch pod":
        return runner.core.createNamespacedPod({ namespace, body: built.object as V1Pod, ...DRY });
      case "build Job":
        return runner.kubeConfig.makeApiClient(BatchV1Api).createNamespacedJob({ namespace, body: built.object as V1Job, ...DRY });
      case "Service":
        return runner.core.createNamespacedService({ namespace, body: built.object as V1Service, ...DRY });
      case "Ingress":
        return runner.kubeConfig.makeApiClient(NetworkingV1Api).createNamespacedIngress({ namespace, body: built.object as V1Ingress, ...DRY });
      case "workspace ConfigMap":
        return runner.core.createNamespacedConfigMap({ namespace, body: built.object as V1ConfigMap, ...DRY });
      case "HTTPRoute":
        return (await runner.kubeConfig.makeApiClient(CustomObjectsApi).createNamespacedCustomObject({
          group: "gateway.networking.k8s.io",
          version: "v1",
          namespace,
          plural: "httproutes",
          body: built.object,
          ...DRY,
        })) as { metadata?: { name?: string } };
    }
  }

  const objects = () => builtObjects({ runtimeClass: runner.runtimeClass });
  // The real cluster has no Gateway API CRDs (no registry serves them to this machine).
  const builders = ["run pod", "pool pod", "app pod", "watch pod", "build Job", "Service", "Ingress", "workspace ConfigMap", ...(ON_REAL_CLUSTER ? [] : ["HTTPRoute" as const])] as const;

  it.each(builders)("every %s configuration is accepted", async (builder) => {
    const refused: string[] = [];
    for (const built of objects().filter((candidate) => candidate.builder === builder)) {
      try {
        const created = await dryCreate(built);
        expect(created.metadata?.name).toBe(built.object.metadata?.name);
      } catch (error) {
        const body = (error as { body?: unknown }).body;
        refused.push(`${built.label}: ${typeof body === "string" ? body : (error as Error).message}`);
      }
    }
    expect(refused).toEqual([]);
  });
});
