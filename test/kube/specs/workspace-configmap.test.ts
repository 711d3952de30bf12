import { createHash } from "node:crypto";
import { describe, expect, it } from "vitest";
import { workspaceConfigMap } from "../../../src/kube/specs/workspace-configmap.ts";
import { expectSchemaValid } from "../fixtures.ts";

const MANIFEST = "kind: Telo.Application\nmetadata:\n  name: TeloWorkspace\n";

describe("workspaceConfigMap", () => {
  it("holds the workspace manifest under a content-addressed name", () => {
    const hash = createHash("sha256").update(MANIFEST).digest("hex").slice(0, 12);
    const configMap = workspaceConfigMap({ manifest: MANIFEST, namespace: "telo-sessions", managedBy: "telo-k8s-runner" });
    expect(configMap).toEqual({
      apiVersion: "v1",
      kind: "ConfigMap",
      metadata: {
        name: `telo-workspace-app-${hash}`,
        namespace: "telo-sessions",
        labels: { "app.kubernetes.io/managed-by": "telo-k8s-runner" },
      },
      data: { "telo.yaml": MANIFEST },
    });
    expectSchemaValid(configMap);
  });

  it("gets a new name when the manifest changes", () => {
    const a = workspaceConfigMap({ manifest: MANIFEST, namespace: "n", managedBy: "m" });
    const b = workspaceConfigMap({ manifest: MANIFEST + "# v2\n", namespace: "n", managedBy: "m" });
    expect(a.metadata?.name).not.toBe(b.metadata?.name);
  });
});
