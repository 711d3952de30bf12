/**
 * Whether a cluster is configured, decided from the environment and the filesystem alone, so
 * that `npm start`'s api process can choose between a configured cluster and the embedded
 * simulated one without loading a Kubernetes client (issue 9, bug 6).
 */
import { existsSync } from "node:fs";
import { homedir } from "node:os";
import { join } from "node:path";

export type ClusterSource = "in-cluster" | "kubeconfig";

/** In-cluster when running in a pod, else a kubeconfig that exists, else undefined. */
export function clusterSource(env: NodeJS.ProcessEnv): ClusterSource | undefined {
  if (env.KUBERNETES_SERVICE_HOST) return "in-cluster";
  const files = (env.KUBECONFIG ?? "").split(":").filter((file) => file !== "");
  const candidates = files.length > 0 ? files : [join(env.HOME ?? homedir(), ".kube", "config")];
  return candidates.some((file) => existsSync(file)) ? "kubeconfig" : undefined;
}
