import { describe, expect, it } from "vitest";
import * as names from "../../../src/kube/specs/names.ts";

const ID = "k7m3qx4r2abc";

describe("object names", () => {
  it("derives every name from the session id, port, tag or content", () => {
    expect(names.runPodName(ID)).toBe("telo-run-k7m3qx4r2abc");
    expect(names.serviceName(ID)).toBe("telo-run-k7m3qx4r2abc");
    expect(names.ingressName(ID)).toBe("telo-run-k7m3qx4r2abc");
    expect(names.httpRouteName(ID, 8080)).toBe("telo-run-k7m3qx4r2abc-8080");
    expect(names.watchPodName(ID, "mihq0x2o1")).toBe("telo-watch-k7m3qx4r2abc-mihq0x2o1");
    expect(names.buildJobName("0123456789abcdef0123456789abcdef")).toBe("telo-build-0123456789abcdef0123456789abcdef");
    expect(names.workspaceConfigMapName("modules: []\n")).toMatch(/^telo-workspace-app-[0-9a-f]{12}$/);
    expect(names.sessionHost(8080, ID, "run.example.com")).toBe("8080-k7m3qx4r2abc.run.example.com");
  });

  it("makes watch pod suffixes from base36 epoch milliseconds and a process counter", () => {
    expect(names.watchPodSuffix(1_764_433_800_000, 0)).toBe("mikibtc00");
    expect(names.watchPodSuffix(1_764_433_800_000, 35)).toBe("mikibtc0z");
    expect(names.watchPodSuffix(1_764_433_800_000, 36)).toBe("mikibtc010");
  });
});

describe("labels and selectors", () => {
  it("labels session pods, watch pods and builds", () => {
    expect(names.sessionLabels("telo-k8s-runner", ID)).toEqual({
      "app.kubernetes.io/managed-by": "telo-k8s-runner",
      "telo.run/session-id": ID,
    });
    expect(names.watchPodLabels("telo-k8s-runner", ID)).toEqual({
      "app.kubernetes.io/managed-by": "telo-k8s-runner",
      "telo.run/session-id": ID,
      "telo.run/mode": "watch",
    });
    expect(names.buildLabels("telo-k8s-runner")).toEqual({
      "app.kubernetes.io/managed-by": "telo-k8s-runner",
      "telo.run/build": "true",
    });
  });

  it("selects by label, never by name", () => {
    expect(names.managedBySelector("telo-k8s-runner")).toBe("app.kubernetes.io/managed-by=telo-k8s-runner");
    expect(names.sessionSelector(ID)).toBe("telo.run/session-id=k7m3qx4r2abc");
    expect(names.jobPodsSelector("telo-build-abc")).toBe("job-name=telo-build-abc");
  });
});
