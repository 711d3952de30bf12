/**
 * The workspace-app ConfigMap (docs/kubernetes.md "ConfigMaps"): the workspace application manifest that
 * every watch pod's `workspace` container runs, mounted read-only. Content-addressed by name,
 * so it is never updated and running sessions keep the manifest they booted with.
 */
import type { V1ConfigMap } from "@kubernetes/client-node";
import { stampLabels, workspaceConfigMapName } from "./names.ts";

const WORKSPACE_MANIFEST_KEY = "telo.yaml";

export interface WorkspaceConfigMapInput {
  /** The workspace application manifest shipped with the core (identical across backends). */
  manifest: string;
  namespace: string;
  managedBy: string;
  ownerId: string;
}

export function workspaceConfigMap(input: WorkspaceConfigMapInput): V1ConfigMap {
  return {
    apiVersion: "v1",
    kind: "ConfigMap",
    metadata: {
      name: workspaceConfigMapName(input.manifest, input.ownerId),
      namespace: input.namespace,
      labels: stampLabels(input),
    },
    data: { [WORKSPACE_MANIFEST_KEY]: input.manifest },
  };
}
