import { describe, expect, it } from "vitest";
import * as names from "../../../src/kube/specs/names.ts";
import { DEFAULT_OWNER_ID } from "../../../src/config/owner.ts";

const ID = "k7m3qx4r2abc";

describe("object names", () => {
  it("derives every name from the session id, port, tag or content", () => {
    expect(names.runPodName(ID)).toBe("telo-run-k7m3qx4r2abc");
    expect(names.serviceName(ID)).toBe("telo-run-k7m3qx4r2abc");
    expect(names.ingressName(ID)).toBe("telo-run-k7m3qx4r2abc");
    expect(names.httpRouteName(ID, 8080)).toBe("telo-run-k7m3qx4r2abc-8080");
    expect(names.watchPodName(ID, "mihq0x2o1")).toBe("telo-watch-k7m3qx4r2abc-mihq0x2o1");
    expect(names.buildJobName("0123456789abcdef0123456789abcdef")).toBe("telo-build-0123456789abcdef0123456789abcdef");
    expect(names.workspaceConfigMapName("modules: []\n", "default")).toMatch(/^telo-workspace-app-[0-9a-f]{12}$/);
    expect(names.sessionHost(8080, ID, "run.example.com")).toBe("8080-k7m3qx4r2abc.run.example.com");
  });

  it("makes watch pod suffixes from base36 epoch milliseconds and a process counter", () => {
    expect(names.watchPodSuffix(1_764_433_800_000, 0)).toBe("mikibtc00");
    expect(names.watchPodSuffix(1_764_433_800_000, 35)).toBe("mikibtc0z");
    expect(names.watchPodSuffix(1_764_433_800_000, 36)).toBe("mikibtc010");
  });
});

describe("labels and selectors", () => {
  const A = { managedBy: "telo-k8s-runner", ownerId: "runner-a" };
  const DEFAULT = { managedBy: "telo-k8s-runner", ownerId: DEFAULT_OWNER_ID };

  it("labels session pods, watch pods, pool pods and builds with the install and the owner", () => {
    const stamp = { "app.kubernetes.io/managed-by": "telo-k8s-runner", "telo.run/owner": "runner-a" };
    expect(names.stampLabels(A)).toEqual(stamp);
    expect(names.sessionLabels(A, ID)).toEqual({ ...stamp, "telo.run/session-id": ID });
    expect(names.watchPodLabels(A, ID)).toEqual({ ...stamp, "telo.run/session-id": ID, "telo.run/mode": "watch" });
    expect(names.poolLabels(A)).toEqual({ ...stamp, "telo.run/pool": "true" });
    expect(names.buildLabels(A)).toEqual({ ...stamp, "telo.run/build": "true" });
    expect(names.stampLabels(DEFAULT)).toEqual({ "app.kubernetes.io/managed-by": "telo-k8s-runner", "telo.run/owner": "default" });
  });

  it("selects by label, never by name", () => {
    expect(names.sessionSelector(ID)).toBe("telo.run/session-id=k7m3qx4r2abc");
    expect(names.jobPodsSelector("telo-build-abc")).toBe("job-name=telo-build-abc");
  });

  it("selects a named owner's objects exactly, and the whole install for the default owner", () => {
    expect(names.ownedObjects(A).labelSelector).toBe("app.kubernetes.io/managed-by=telo-k8s-runner,telo.run/owner=runner-a");
    expect(names.ownedObjects(DEFAULT).labelSelector).toBe("app.kubernetes.io/managed-by=telo-k8s-runner");
  });

  it("gives an object without the owner label to the default owner alone", () => {
    const labelled = (labels: Record<string, string>) => ({ metadata: { labels: { "app.kubernetes.io/managed-by": "telo-k8s-runner", ...labels } } });
    const unlabelled = labelled({});
    const ofA = labelled({ "telo.run/owner": "runner-a" });
    const ofDefault = labelled({ "telo.run/owner": "default" });
    expect([unlabelled, ofA, ofDefault, {}].map(names.ownedObjects(DEFAULT).keep)).toEqual([true, false, true, true]);
    expect([unlabelled, ofA, ofDefault, {}].map(names.ownedObjects(A).keep)).toEqual([false, true, false, false]);
  });
});
