import { createHash } from "node:crypto";
import { describe, expect, it } from "vitest";
import { workspaceConfigMap } from "../../../src/kube/specs/workspace-configmap.ts";
import { expectSchemaValid } from "../fixtures.ts";

const MANIFEST = "kind: Telo.Application\nmetadata:\n  name: TeloWorkspace\n";

describe("workspaceConfigMap", () => {
  it("holds the workspace manifest under a content-addressed name", () => {
    const hash = createHash("sha256").update(`runner-a\n${MANIFEST}`).digest("hex").slice(0, 12);
    const configMap = workspaceConfigMap({ manifest: MANIFEST, namespace: "telo-sessions", managedBy: "telo-k8s-runner", ownerId: "runner-a" });
    expect(configMap).toEqual({
      apiVersion: "v1",
      kind: "ConfigMap",
      metadata: {
        name: `telo-workspace-app-${hash}`,
        namespace: "telo-sessions",
        labels: { "app.kubernetes.io/managed-by": "telo-k8s-runner", "telo.run/owner": "runner-a" },
      },
      data: { "telo.yaml": MANIFEST },
    });
    expectSchemaValid(configMap);
  });

  it("gets a new name when the manifest changes", () => {
    const a = workspaceConfigMap({ manifest: MANIFEST, namespace: "n", managedBy: "m", ownerId: "default" });
    const b = workspaceConfigMap({ manifest: MANIFEST + "# v2\n", namespace: "n", managedBy: "m", ownerId: "default" });
    expect(a.metadata?.name).not.toBe(b.metadata?.name);
  });

  it("gets its own name for each owner, so that two runners never share one", () => {
    const a = workspaceConfigMap({ manifest: MANIFEST, namespace: "n", managedBy: "m", ownerId: "runner-a" });
    const b = workspaceConfigMap({ manifest: MANIFEST, namespace: "n", managedBy: "m", ownerId: "runner-b" });
    expect(a.metadata?.name).not.toBe(b.metadata?.name);
  });
});
