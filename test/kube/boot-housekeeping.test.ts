import type { V1ConfigMap, V1Pod } from "@kubernetes/client-node";
import { describe, expect, it } from "vitest";
import { partitionBootPods, reapFailureMessage, settled, staleWorkspaceConfigMaps } from "../../src/kube/boot-housekeeping.ts";
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
    const { adopt, reap } = partitionBootPods([recorded, legacy, garbled, terminating], PLAIN_SETTINGS);
    expect(adopt).toEqual([{ pod: recorded, record: { ...runSession(), envNames: [] } }]);
    expect(reap).toEqual([legacy, garbled, terminating]);
  });

  it("keeps unclaimed warm pool pods for the pool, never reaping them, but for those being deleted", () => {
    const waiting = poolPod({ name: "telo-pool-0123456789ab", settings: PLAIN_SETTINGS, limits: RUN_LIMITS, defaultImage: "telorun/node:latest-slim", claimUrl: "http://runner:8063/internal/pool/telo-pool-0123456789ab?token=x", maxIdleSeconds: 600 });
    const going = { ...waiting, metadata: { ...waiting.metadata, name: "telo-pool-ba9876543210", deletionTimestamp: new Date("2026-11-29T16:00:00Z") } };
    expect(partitionBootPods([waiting, recorded, going], PLAIN_SETTINGS)).toEqual({ adopt: [{ pod: recorded, record: { ...runSession(), envNames: [] } }], reap: [going], pool: [waiting] });
  });
});

describe("partitionBootPods with several runner identities", () => {
  const RUNNER_A = { ...PLAIN_SETTINGS, ownerId: "runner-a" };
  const RUNNER_B = { ...PLAIN_SETTINGS, ownerId: "runner-b" };
  const poolInput = { limits: RUN_LIMITS, defaultImage: "telorun/node:latest-slim", maxIdleSeconds: 600 };
  const claimUrl = (name: string) => `http://runner:8063/internal/pool/${name}?token=x`;
  /** One runner's session pod, waiting pool pod and orphan (a managed pod no record explains). */
  function podsOf(settings: typeof PLAIN_SETTINGS, suffix: string) {
    const session = runPod({ session: runSession({ sessionId: `${suffix}sessionxxxxx`.slice(0, 12) }), env: {}, settings, limits: RUN_LIMITS, defaultImage: "telorun/node:latest-slim", bundleUrl: "http://runner:8063/internal/bundles/x?token=x" });
    const name = `telo-pool-${suffix}pool000000`.slice(0, 22);
    const waiting = poolPod({ ...poolInput, name, settings, claimUrl: claimUrl(name) });
    const orphan = pod(`telo-run-${suffix}orphan00000`.slice(0, 21), { labels: { ...session.metadata!.labels!, "telo.run/session-id": "x" } });
    return { session, waiting, orphan };
  }
  /** As an earlier version wrote them: no owner label. */
  function unlabelled(object: V1Pod): V1Pod {
    const { "telo.run/owner": _owner, ...labels } = object.metadata!.labels!;
    return { ...object, metadata: { ...object.metadata, labels } };
  }
  const a = podsOf(RUNNER_A, "a");
  const b = podsOf(RUNNER_B, "b");
  const old = podsOf(PLAIN_SETTINGS, "o");
  const legacy = { session: unlabelled(old.session), waiting: unlabelled(old.waiting), orphan: unlabelled(old.orphan) };
  const all = [a, b, old, legacy].flatMap(({ session, waiting, orphan }) => [session, waiting, orphan]);
  const names = (pods: readonly V1Pod[]) => pods.map((p) => p.metadata?.name);

  it("adopts, pools and reaps only the pods of its own identity", () => {
    const forA = partitionBootPods(all, RUNNER_A);
    expect(names(forA.adopt.map(({ pod }) => pod))).toEqual(names([a.session]));
    expect(names(forA.pool)).toEqual(names([a.waiting]));
    expect(names(forA.reap)).toEqual(names([a.orphan]));
    const forB = partitionBootPods(all, RUNNER_B);
    expect(names(forB.adopt.map(({ pod }) => pod))).toEqual(names([b.session]));
    expect(names(forB.pool)).toEqual(names([b.waiting]));
    expect(names(forB.reap)).toEqual(names([b.orphan]));
  });

  it("gives pods written before the owner label to the default identity, never to a named one", () => {
    const forDefault = partitionBootPods(all, PLAIN_SETTINGS);
    expect(forDefault.adopt.map(({ pod }) => pod)).toEqual([old.session, legacy.session]);
    expect(forDefault.pool).toEqual([old.waiting, legacy.waiting]);
    expect(forDefault.reap).toEqual([old.orphan, legacy.orphan]);
    for (const named of [RUNNER_A, RUNNER_B]) {
      const { adopt, pool, reap } = partitionBootPods(Object.values(legacy), named);
      expect([...adopt, ...pool, ...reap]).toEqual([]);
    }
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
  const configMap = (name: string, labels: Record<string, string> = {}): V1ConfigMap => ({ apiVersion: "v1", kind: "ConfigMap", metadata: { name, labels } });

  it("sweeps only its own identity's ConfigMaps; unlabelled ones are the default identity's", () => {
    const configMaps = [
      configMap("telo-workspace-app-00000000000a", { "telo.run/owner": "runner-a" }),
      configMap("telo-workspace-app-00000000000b", { "telo.run/owner": "runner-b" }),
      configMap("telo-workspace-app-00000000000c"),
    ];
    const current = "telo-workspace-app-000000000001";
    expect(staleWorkspaceConfigMaps(configMaps, [], current, { ...PLAIN_SETTINGS, ownerId: "runner-a" })).toEqual(["telo-workspace-app-00000000000a"]);
    expect(staleWorkspaceConfigMaps(configMaps, [], current, PLAIN_SETTINGS)).toEqual(["telo-workspace-app-00000000000c"]);
  });

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
    expect(staleWorkspaceConfigMaps(configMaps, pods, "telo-workspace-app-000000000001", PLAIN_SETTINGS)).toEqual([
      "telo-workspace-app-000000000004",
    ]);
  });
});

describe("settled", () => {
  const at = (iso: string) => ({ metadata: { creationTimestamp: new Date(iso) } });
  const now = Date.parse("2026-12-02T01:00:00Z");

  it("keeps what is at least the minimum age old, and what has no creation time", () => {
    const old = at("2026-12-02T00:54:59Z");
    const young = at("2026-12-02T00:59:00Z");
    const unknown = { metadata: {} };
    expect(settled([old, young, unknown], now, 5 * 60_000)).toEqual([old, unknown]);
    expect(settled([old, young], now, 0)).toEqual([old, young]);
  });
});
