/**
 * What the supervisor decides at boot about objects an earlier process left behind
 * (docs/kubernetes.md "Boot: adoption and reaping"): live session pods
 * whose record parses are re-adopted; warm pool pods go to the pool; only what neither explains
 * is reaped. Workspace ConfigMaps no pod mounts are swept. All of it only for this runner's own
 * objects (its owner label; none for the default identity): another runner's sessions, pool
 * pods and ConfigMaps in the same namespace are never adopted, pooled or deleted
 * (docs/ownership.md).
 */
import type { V1ConfigMap, V1Pod } from "@kubernetes/client-node";
import { isOwnedBy, LABEL, type Stamp, WORKSPACE_CONFIGMAP_PREFIX } from "./specs/names.ts";
import { parseSessionRecord, type SessionRecord } from "./specs/session-record.ts";

export interface BootPods {
  /** Session pods with a valid record, in list order (a watch session's predecessor may be among them while terminating). */
  adopt: Array<{ pod: V1Pod; record: SessionRecord }>;
  /** Managed pods no record explains, or already being deleted: delete (grace 0, 404 ok). */
  reap: V1Pod[];
  /** Unclaimed warm pool pods: the pool's own, explained by their label rather than a record. */
  pool: V1Pod[];
}

/**
 * Splits this runner's pods of the session namespace into those to re-adopt, to pool and to
 * reap; other runners' pods are in none. The pod watch holds only this runner's pods already;
 * the check is repeated here because the reap it feeds cannot be undone.
 */
export function partitionBootPods(pods: readonly V1Pod[], stamp: Stamp): BootPods {
  const result: BootPods = { adopt: [], reap: [], pool: [] };
  for (const pod of pods) {
    if (!isOwnedBy(stamp, pod)) continue;
    const record = parseSessionRecord(pod);
    const deleting = pod.metadata?.deletionTimestamp !== undefined;
    if (record === undefined && !deleting && pod.metadata?.labels?.[LABEL.pool] === "true") result.pool.push(pod);
    else if (record === undefined || deleting) result.reap.push(pod);
    else result.adopt.push({ pod, record });
  }
  return result;
}

/** `failed to reap <n> orphan pod(s): <name>: <msg>; …` — a warning, boot continues. */
export function reapFailureMessage(failures: ReadonlyArray<{ name: string; message: string }>): string {
  return `failed to reap ${failures.length} orphan pod(s): ${failures.map((f) => `${f.name}: ${f.message}`).join("; ")}`;
}

/**
 * Workspace ConfigMaps to delete: this runner's own named `telo-workspace-app-…` that are
 * neither the current manifest's nor mounted by any pod of the namespace (labelled or not, any
 * runner's).
 */
export function staleWorkspaceConfigMaps(
  configMaps: readonly V1ConfigMap[],
  pods: readonly V1Pod[],
  currentName: string,
  stamp: Stamp,
): string[] {
  const keep = new Set([currentName]);
  for (const pod of pods) {
    for (const volume of pod.spec?.volumes ?? []) if (volume.configMap?.name) keep.add(volume.configMap.name);
  }
  return configMaps
    .filter((configMap) => isOwnedBy(stamp, configMap))
    .map((configMap) => configMap.metadata?.name ?? "")
    .filter((name) => name.startsWith(WORKSPACE_CONFIGMAP_PREFIX) && !keep.has(name));
}

/**
 * How old an unexplained object must be before the duties holder of several replicas sweeps it:
 * it may see a Secret or ConfigMap another replica has just made for a pod it is about to create
 * (or, mid-rollout, a ConfigMap of a newer runner version). One replica at boot has no such peer.
 */
export const SWEEP_MIN_AGE_MS = 5 * 60_000;

/** The objects created at least `minAgeMs` before `now`; one without a creation time counts as old. */
export function settled<T extends { metadata?: { creationTimestamp?: Date | string } }>(objects: readonly T[], now: number, minAgeMs: number): T[] {
  return objects.filter((object) => {
    const created = object.metadata?.creationTimestamp;
    return created === undefined || now - new Date(created).getTime() >= minAgeMs;
  });
}
