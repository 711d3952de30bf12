/** How a replica names itself to the apiserver. */

/**
 * The User-Agent a replica's Kubernetes calls carry: the apiserver's audit log records it, so
 * each replica's writes can be told apart there (the replicas share one ServiceAccount).
 */
export function replicaUserAgent(identity: string, version: string): string {
  return `telo-k8s-runner/${version} (replica ${identity})`;
}
