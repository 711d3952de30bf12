/**
 * The cluster a runner on one machine uses when nothing is configured: the embedded simulated
 * cluster, in a child process of its own, announced loudly on stderr so that nobody takes it for
 * a real cluster. `npm start` (`k8s-runner serve`) and `k8s-runner supervisor` share this choice.
 */
import { clusterSource } from "../config/cluster-source.ts";
import { loadLocalClusterLayout } from "../config/kube.ts";
import { exitOnConfigError } from "../config/startup.ts";
import { ephemeralPort } from "../internal/listen.ts";
import { forkLocalCluster, type LocalClusterProcess } from "./local-cluster-process.ts";

/**
 * With a cluster configured (in a pod, a kubeconfig), nothing; otherwise the simulated cluster,
 * started, with what the runner needs to use it (its kubeconfig, the bundle URL) added to `env`.
 */
export async function embeddedClusterUnlessConfigured(env: NodeJS.ProcessEnv): Promise<LocalClusterProcess | undefined> {
  if (clusterSource(env)) return undefined;
  // Session pods of the simulated cluster fetch their bundle from RUNNER_SELF_URL, which the
  // local layout derives from RUNNER_BUNDLE_PORT; nothing outside this machine needs a fixed
  // port, so a free one is chosen (two runners started together never race for 8063).
  if (exitOnConfigError(() => loadLocalClusterLayout(env)).bundlePortIsDefault) env.RUNNER_BUNDLE_PORT = String(await ephemeralPort("0.0.0.0"));
  const simulated = await forkLocalCluster(env);
  Object.assign(env, simulated.env);
  process.stderr.write(
    `\n  *** No Kubernetes cluster is configured: running against the EMBEDDED SIMULATED CLUSTER at ${simulated.url}.\n` +
      `  *** Nothing runs in a real cluster. kubeconfig: ${simulated.kubeconfigPath}\n\n`,
  );
  return simulated;
}
