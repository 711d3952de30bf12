import { describe, expect, it } from "vitest";
import { mergedNodeOptions, withKernelNodeOptions } from "../../../src/kube/specs/kernel-env.ts";
import { runPod } from "../../../src/kube/specs/run-pod.ts";
import { claimScript } from "../../../src/kube/specs/pool-pod.ts";
import { PLAIN_SETTINGS, RUN_LIMITS, runSession } from "../fixtures.ts";

describe("the kernel's NODE_OPTIONS", () => {
  it("adds --report-exclude-network to whatever the session sets", () => {
    expect(mergedNodeOptions(undefined)).toBe("--report-exclude-network");
    expect(mergedNodeOptions("")).toBe("--report-exclude-network");
    expect(mergedNodeOptions("--max-old-space-size=256  --enable-source-maps")).toBe("--max-old-space-size=256 --enable-source-maps --report-exclude-network");
    // Given already: not twice.
    expect(mergedNodeOptions("--report-exclude-network --trace-warnings")).toBe("--report-exclude-network --trace-warnings");
  });

  it("keeps the session's other env as it is", () => {
    expect(withKernelNodeOptions({ A: "1", NODE_OPTIONS: "--inspect-brk" })).toEqual({ A: "1", NODE_OPTIONS: "--inspect-brk --report-exclude-network" });
  });

  it("reaches the kernel container of a run pod and a warm pool claim", () => {
    const pod = runPod({
      session: runSession(),
      env: { NODE_OPTIONS: "--max-old-space-size=256" },
      settings: PLAIN_SETTINGS,
      limits: RUN_LIMITS,
      defaultImage: "telorun/node:latest-slim",
      bundleUrl: "http://runner:8081/bundles/x",
    });
    const env = pod.spec?.containers[0]?.env ?? [];
    expect(env.filter((variable) => variable.name === "NODE_OPTIONS")).toEqual([{ name: "NODE_OPTIONS", value: "--max-old-space-size=256 --report-exclude-network" }]);
    const script = claimScript({ bundleUrl: "http://runner/b", env: {}, entryRelativePath: "telo.yaml", inspect: false });
    expect(script).toContain("export 'NODE_OPTIONS=--report-exclude-network'");
  });
});
