/**
 * Which cluster the runner talks to (kubernetes.md §1.4 step 2, issue #3): in-cluster when it
 * runs in a pod, else the kubeconfig (KUBECONFIG or ~/.kube/config), else nothing — and then
 * `npm start` brings up the embedded simulated cluster and says so.
 */
import { existsSync } from "node:fs";
import { homedir } from "node:os";
import { join } from "node:path";
import { KubeConfig } from "@kubernetes/client-node";

export type ClusterSource = "in-cluster" | "kubeconfig";

/** The configured cluster, or undefined when none is configured. */
export function configuredCluster(env: NodeJS.ProcessEnv): { kubeConfig: KubeConfig; source: ClusterSource } | undefined {
  if (env.KUBERNETES_SERVICE_HOST) {
    const kubeConfig = new KubeConfig();
    kubeConfig.loadFromCluster();
    return { kubeConfig, source: "in-cluster" };
  }
  const files = (env.KUBECONFIG ?? "").split(":").filter((file) => file !== "");
  const candidates = files.length > 0 ? files : [join(env.HOME ?? homedir(), ".kube", "config")];
  if (!candidates.some((file) => existsSync(file))) return undefined;
  const kubeConfig = new KubeConfig();
  kubeConfig.loadFromDefault();
  return { kubeConfig, source: "kubeconfig" };
}
