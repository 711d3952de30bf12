/**
 * Entry of the embedded simulated cluster's process (see local-cluster-process.ts): lays the
 * cluster out, tells the parent where it is, and ends on SIGTERM/SIGINT or with its parent.
 */
import { currentEnv } from "../config/environment.ts";
import { startLocalCluster } from "../local-cluster/index.ts";
import { onStopRequest } from "./parent.ts";

const local = await startLocalCluster(currentEnv());
process.send?.({ kind: "ready", url: local.cluster.url, kubeconfigPath: local.cluster.kubeconfigPath, env: local.env });

onStopRequest(() => void local.cluster.stop().finally(() => process.exit(0)));
