/**
 * Which cluster the runner talks to (docs/operating.md "Processes"): in-cluster when it
 * runs in a pod, else the kubeconfig (KUBECONFIG or ~/.kube/config), else nothing — and then
 * `npm start` brings up the embedded simulated cluster and says so.
 */
import { KubeConfig } from "@kubernetes/client-node";
import type { ClusterSource } from "../../config/cluster-source.ts";

export type { ClusterSource } from "../../config/cluster-source.ts";

/** The client of the configured cluster (src/config/cluster-source.ts says which), or undefined when none is. */
export function configuredCluster(source: ClusterSource | undefined): { kubeConfig: KubeConfig; source: ClusterSource } | undefined {
  if (!source) return undefined;
  const kubeConfig = new KubeConfig();
  if (source === "in-cluster") kubeConfig.loadFromCluster();
  else kubeConfig.loadFromDefault();
  return { kubeConfig, source };
}
