/**
 * Entry of the embedded simulated cluster's process (see local-cluster-process.ts): lays the
 * cluster out, tells the parent where it is, and ends on SIGTERM/SIGINT or with its parent.
 */
import { currentEnv } from "../config/environment.ts";
import { startLocalCluster } from "../local-cluster/index.ts";
import { onParentGone } from "./parent.ts";

const local = await startLocalCluster(currentEnv());
process.send?.({ kind: "ready", url: local.cluster.url, kubeconfigPath: local.cluster.kubeconfigPath, env: local.env });

let stopping = false;
const stop = () => {
  if (stopping) return;
  stopping = true;
  void local.cluster.stop().finally(() => process.exit(0));
};
process.once("SIGTERM", stop);
process.once("SIGINT", stop);
onParentGone(stop);
