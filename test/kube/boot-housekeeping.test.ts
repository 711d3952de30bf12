import type { V1ConfigMap, V1Pod } from "@kubernetes/client-node";
import { describe, expect, it } from "vitest";
import { partitionBootPods, reapFailureMessage, staleWorkspaceConfigMaps } from "../../src/kube/boot-housekeeping.ts";
import { poolPod } from "../../src/kube/specs/pool-pod.ts";
import { runPod } from "../../src/kube/specs/run-pod.ts";
import { PLAIN_SETTINGS, RUN_LIMITS, runSession } from "./fixtures.ts";

const recorded = runPod({
  session: runSession(),
  env: {},
  settings: PLAIN_SETTINGS,
  limits: RUN_LIMITS,
  defaultImage: "telorun/node:latest-slim",
  bundleUrl: "http://runner:8063/internal/bundles/k7m3qx4r2abc?token=x",
});

function pod(name: string, extra: Partial<NonNullable<V1Pod["metadata"]>> = {}, volumes: string[] = []): V1Pod {
  return {
    apiVersion: "v1",
    kind: "Pod",
    metadata: { name, labels: { "app.kubernetes.io/managed-by": "telo-k8s-runner" }, ...extra },
    spec: {
      containers: [{ name: "c", image: "i" }],
      volumes: volumes.map((configMap) => ({ name: "workspace-app", configMap: { name: configMap } })),
    },
  };
}

describe("partitionBootPods", () => {
  it("re-adopts pods with a valid record and reaps what no record explains", () => {
    const legacy = pod("telo-run-aaaaaaaaaaaa");
    const garbled = pod("telo-run-bbbbbbbbbbbb", { annotations: { "telo.run/session": "{}" } });
    const terminating = { ...recorded, metadata: { ...recorded.metadata, deletionTimestamp: new Date("2026-11-29T16:00:00Z") } };
    const { adopt, reap } = partitionBootPods([recorded, legacy, garbled, terminating]);
    expect(adopt).toEqual([{ pod: recorded, record: { ...runSession(), envNames: [] } }]);
    expect(reap).toEqual([legacy, garbled, terminating]);
  });

  it("keeps unclaimed warm pool pods for the pool, never reaping them, but for those being deleted", () => {
    const waiting = poolPod({ name: "telo-pool-0123456789ab", settings: PLAIN_SETTINGS, limits: RUN_LIMITS, defaultImage: "telorun/node:latest-slim", claimUrl: "http://runner:8063/internal/pool/telo-pool-0123456789ab?token=x", maxIdleSeconds: 600 });
    const going = { ...waiting, metadata: { ...waiting.metadata, name: "telo-pool-ba9876543210", deletionTimestamp: new Date("2026-11-29T16:00:00Z") } };
    expect(partitionBootPods([waiting, recorded, going])).toEqual({ adopt: [{ pod: recorded, record: { ...runSession(), envNames: [] } }], reap: [going], pool: [waiting] });
  });
});

describe("reapFailureMessage", () => {
  it("lists every pod that could not be deleted", () => {
    expect(
      reapFailureMessage([
        { name: "telo-run-a", message: "the Kubernetes API could not be reached" },
        { name: "telo-run-b", message: "the Kubernetes API rejected the request (HTTP 500)" },
      ]),
    ).toBe(
      "failed to reap 2 orphan pod(s): telo-run-a: the Kubernetes API could not be reached; telo-run-b: the Kubernetes API rejected the request (HTTP 500)",
    );
  });
});

describe("staleWorkspaceConfigMaps", () => {
  const configMap = (name: string): V1ConfigMap => ({ apiVersion: "v1", kind: "ConfigMap", metadata: { name } });

  it("keeps the current manifest's and every mounted one, and never touches other ConfigMaps", () => {
    const configMaps = [
      configMap("telo-workspace-app-000000000001"),
      configMap("telo-workspace-app-000000000002"),
      configMap("telo-workspace-app-000000000003"),
      configMap("telo-workspace-app-000000000004"),
      configMap("telo-k8s-runner-terms"),
    ];
    const pods = [
      pod("telo-watch-a-1", {}, ["telo-workspace-app-000000000002"]),
      pod("someone-elses", { labels: {} }, ["telo-workspace-app-000000000003"]),
    ];
    expect(staleWorkspaceConfigMaps(configMaps, pods, "telo-workspace-app-000000000001")).toEqual([
      "telo-workspace-app-000000000004",
    ]);
  });
});
