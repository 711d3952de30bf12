/**
 * The embedded simulated cluster laid out as the runner expects a cluster to be: the session
 * and build namespaces the manifests create (the session one enforcing the restricted Pod
 * Security profile), and the settings a runner on this machine needs to use it. `npm start`,
 * the process-level tests and the benchmarks all start their cluster through here.
 */
import { CoreV1Api } from "@kubernetes/client-node";
import { loadLocalClusterLayout } from "../config/kube.ts";
import { type SimulatedCluster, type SimulatedClusterOptions, startSimulatedCluster } from "../sim/index.ts";

export type LocalCluster = {
  cluster: SimulatedCluster;
  /** `env` with what the runner needs to use this cluster; values `env` already sets are kept. */
  env: Record<string, string>;
};

export async function startLocalCluster(env: NodeJS.ProcessEnv, options: SimulatedClusterOptions = {}): Promise<LocalCluster> {
  const { sessionNamespace, buildNamespace } = loadLocalClusterLayout(env);
  const cluster = await startSimulatedCluster(options);
  const core = cluster.kubeConfig().makeApiClient(CoreV1Api);
  for (const [name, level] of [[sessionNamespace, "restricted"], [buildNamespace, "baseline"]] as const) {
    await core.createNamespace({
      body: { metadata: { name, labels: { "pod-security.kubernetes.io/enforce": level, "pod-security.kubernetes.io/warn": level } } },
    });
  }
  return { cluster, env: localClusterEnv(cluster, env) };
}

/** What a runner on this machine needs to use `cluster` (one already laid out), over `env`. */
export function localClusterEnv(cluster: SimulatedCluster, env: NodeJS.ProcessEnv): Record<string, string> {
  const { bundlePort } = loadLocalClusterLayout(env);
  const defined = Object.fromEntries(Object.entries(env).filter((entry): entry is [string, string] => entry[1] !== undefined));
  return {
    // Session pods fetch their bundle from the runner on this machine.
    RUNNER_SELF_URL: `http://127.0.0.1:${bundlePort}`,
    // Docker Hub is not the simulated cluster's business: offer the default image only.
    RUNNER_BASE_IMAGE_CATALOG_ENABLED: "false",
    ...defined,
    KUBECONFIG: cluster.kubeconfigPath,
    RUNNER_SIMULATED_CLUSTER: "true",
  };
}
