/**
 * Create-or-replace bodies (docs/kubernetes.md "Services and routes"): after a 409 on create, the runner reads
 * the existing object and replaces it with the new body plus what the API server requires to be
 * carried over.
 */
import type { V1Service } from "@kubernetes/client-node";

/** Any object's metadata as far as replacing goes (client-node and kubernetes-models types alike). */
interface Versioned {
  metadata?: { resourceVersion?: string | undefined };
}

/** The new body carrying the existing `resourceVersion`, so a concurrent change is a 409, not lost. */
export function replacementOf<T extends Versioned>(desired: T, existing: Versioned): T {
  return { ...desired, metadata: { ...desired.metadata, resourceVersion: existing.metadata?.resourceVersion } };
}

/** A Service replacement also keeps `clusterIP`/`clusterIPs`: they are immutable and an empty one is refused. */
export function serviceReplacement(desired: V1Service, existing: V1Service): V1Service {
  const replacement = replacementOf(desired, existing);
  return {
    ...replacement,
    spec: {
      ...replacement.spec,
      ...(existing.spec?.clusterIP !== undefined && { clusterIP: existing.spec.clusterIP }),
      ...(existing.spec?.clusterIPs !== undefined && { clusterIPs: existing.spec.clusterIPs }),
    },
  };
}
