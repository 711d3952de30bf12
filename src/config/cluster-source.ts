/**
 * Whether a cluster is configured, decided from the environment and the filesystem alone, so
 * that `npm start`'s api process can choose between a configured cluster and the embedded
 * simulated one without loading a Kubernetes client.
 */
import { existsSync } from "node:fs";
import { homedir } from "node:os";
import { join } from "node:path";
import * as v from "valibot";
import { parseEnv, stringVar } from "./env-values.ts";

export type ClusterSource = "in-cluster" | "kubeconfig";

/** What the Kubernetes client itself looks at: set in every pod by the kubelet, or the kubeconfig's place. */
export const clusterEnvSchema = v.object({
  KUBERNETES_SERVICE_HOST: stringVar(undefined),
  KUBECONFIG: stringVar(undefined),
  HOME: stringVar(undefined),
});

/** In-cluster when running in a pod, else a kubeconfig that exists, else undefined. */
export function clusterSource(env: NodeJS.ProcessEnv): ClusterSource | undefined {
  const vars = parseEnv(clusterEnvSchema, env);
  if (vars.KUBERNETES_SERVICE_HOST) return "in-cluster";
  const files = (vars.KUBECONFIG ?? "").split(":").filter((file) => file !== "");
  const candidates = files.length > 0 ? files : [join(vars.HOME ?? homedir(), ".kube", "config")];
  return candidates.some((file) => existsSync(file)) ? "kubeconfig" : undefined;
}
