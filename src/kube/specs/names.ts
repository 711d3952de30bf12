/**
 * Names, labels and selectors of every object the runner creates (docs/kubernetes.md "Objects at a glance", "Run pods",
 * docs/kubernetes.md "Image builds", "ConfigMaps", "Watch pods", "Services and routes"). Lookups and reaping select by label, never by name, so the label
 * keys below are the runner's contract with its own earlier processes: never rename them. Every
 * object carries its install and owner (stampLabels); docs/ownership.md says what the owner scopes.
 */
import { createHash } from "node:crypto";
import { DEFAULT_OWNER_ID } from "../../config/owner.ts";

export const LABEL = {
  managedBy: "app.kubernetes.io/managed-by",
  sessionId: "telo.run/session-id",
  mode: "telo.run/mode",
  build: "telo.run/build",
  /** An unclaimed warm pool pod; a claim replaces it with the session's labels. */
  pool: "telo.run/pool",
  /** The runner identity (RUNNER_OWNER_ID) that created the object and alone adopts, pools or reaps it. */
  owner: "telo.run/owner",
  /**
   * Among replicas, the replica (RUNNER_REPLICA_ID) that made a pool pod: it alone holds the
   * pod's claim token, so a claim made elsewhere hands the answer to it (docs/replicas.md
   * "The warm pool beside several replicas"). Absent for one replica.
   */
  poolMaker: "telo.run/pool-maker",
  /** A session pod's workload-token Secret; the boot sweep selects on it. */
  token: "telo.run/token",
} as const;

/** What every object the runner creates is stamped with: its install (managed-by) and, within it, the runner that owns it. */
export interface Stamp {
  managedBy: string;
  ownerId: string;
}

/** The Job controller labels a Job's pods with this; the build log tail selects on it. */
const JOB_NAME_LABEL = "job-name";

/** Run and app pods; also the stem of every routing object of the session (Service, Ingress). */
export function runPodName(sessionId: string): string {
  return `telo-run-${sessionId}`;
}

/**
 * A warm pool pod keeps the name it was created with when a session claims it: pod names cannot
 * change. The prefix tells a restarted supervisor that a session pod came from the pool.
 */
export const POOL_POD_PREFIX = "telo-pool-";

export function poolPodName(suffix: string): string {
  return `${POOL_POD_PREFIX}${suffix}`;
}

/** The Service and the Ingress share the session's name stem, watch sessions included. */
export const serviceName = runPodName;
export const ingressName = runPodName;

/** One HTTPRoute per routed tcp port. */
export function httpRouteName(sessionId: string, port: number): string {
  return `${runPodName(sessionId)}-${port}`;
}

/**
 * A watch pod gets a fresh name on every (re)creation because its predecessor may still be
 * terminating; `suffix` comes from the caller (see `watchPodSuffix`).
 */
export function watchPodName(sessionId: string, suffix: string): string {
  return `telo-watch-${sessionId}-${suffix}`;
}

/** `<base36(epoch ms)><base36(process counter)>`: unique within a process and across restarts. */
export function watchPodSuffix(epochMs: number, counter: number): string {
  return `${epochMs.toString(36)}${counter.toString(36)}`;
}

/** Watch pods run one container per app under this prefix; its termination ends that app's run. */
export const APP_CONTAINER_PREFIX = "app-";

export function appContainerName(appName: string): string {
  return `${APP_CONTAINER_PREFIX}${appName}`;
}

export function buildJobName(tag: string): string {
  return `telo-build-${tag}`;
}

/**
 * Content-addressed: a new workspace manifest means a new ConfigMap, never an update. The owner
 * is part of the address, so two runners never share one and each sweeps only its own.
 */
export function workspaceConfigMapName(manifest: string, ownerId: string): string {
  const hash = createHash("sha256").update(`${ownerId}\n${manifest}`, "utf8").digest("hex");
  return `${WORKSPACE_CONFIGMAP_PREFIX}${hash.slice(0, 12)}`;
}

export const WORKSPACE_CONFIGMAP_PREFIX = "telo-workspace-app-";

/** The public host of a routed tcp port; one wildcard DNS record and certificate cover all. */
export function sessionHost(port: number, sessionId: string, baseDomain: string): string {
  return `${port}-${sessionId}.${baseDomain}`;
}

/** The labels of every object the runner creates; the routing objects and ConfigMaps carry these alone. */
export function stampLabels(stamp: Stamp): Record<string, string> {
  return { [LABEL.managedBy]: stamp.managedBy, [LABEL.owner]: stamp.ownerId };
}

export function sessionLabels(stamp: Stamp, sessionId: string): Record<string, string> {
  return { ...stampLabels(stamp), [LABEL.sessionId]: sessionId };
}

export function watchPodLabels(stamp: Stamp, sessionId: string): Record<string, string> {
  return { ...sessionLabels(stamp, sessionId), [LABEL.mode]: "watch" };
}

export function poolLabels(stamp: Stamp, maker?: string): Record<string, string> {
  return { ...stampLabels(stamp), [LABEL.pool]: "true", ...(maker !== undefined && { [LABEL.poolMaker]: maker }) };
}

export function buildLabels(stamp: Stamp): Record<string, string> {
  return { ...stampLabels(stamp), [LABEL.build]: "true" };
}

type Labelled = { metadata?: { labels?: Record<string, string> | undefined } | undefined };

/** Whether this runner owns the object: its owner label, or none (written before the label existed) for the default identity. */
export function isOwnedBy(stamp: Stamp, object: Labelled): boolean {
  return (object.metadata?.labels?.[LABEL.owner] ?? DEFAULT_OWNER_ID) === stamp.ownerId;
}

/**
 * What this runner may act on, for a list or watch: the pod watch, the ConfigMap sweep. A named
 * identity is selected exactly; the default one also owns unlabelled objects, which no label
 * selector can add to `owner=default`, so it selects the whole install and `keep` drops the
 * objects of named identities. Every list through `labelSelector` is filtered with `keep`.
 */
export function ownedObjects(stamp: Stamp): { labelSelector: string; keep: (object: Labelled) => boolean } {
  const install = `${LABEL.managedBy}=${stamp.managedBy}`;
  return {
    labelSelector: stamp.ownerId === DEFAULT_OWNER_ID ? install : `${install},${LABEL.owner}=${stamp.ownerId}`,
    keep: (object) => isOwnedBy(stamp, object),
  };
}

/** One session's objects (its pods across recreations, its HTTPRoutes). */
export function sessionSelector(sessionId: string): string {
  return `${LABEL.sessionId}=${sessionId}`;
}

export function jobPodsSelector(jobName: string): string {
  return `${JOB_NAME_LABEL}=${jobName}`;
}
