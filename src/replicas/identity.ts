/** A replica identity's shape, apart from the Lease code, so that reading the configuration loads none of it. */
import * as v from "valibot";

/**
 * A replica identity: its pod name in a cluster. It is part of Lease names, so it must be a
 * DNS-1123 label (a pod name of a Deployment or StatefulSet is one).
 */
export const IdentitySchema = v.pipe(v.string(), v.regex(/^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$/, "a replica identity must be a DNS-1123 label (lowercase letters, digits and '-', at most 63)"));

/**
 * The User-Agent a replica's Kubernetes calls carry: the apiserver's audit log records it, so
 * each replica's writes can be told apart there (the replicas share one ServiceAccount).
 */
export function replicaUserAgent(identity: string, version: string): string {
  return `telo-k8s-runner/${version} (replica ${identity})`;
}
