/**
 * Names, labels and selectors of every object the runner creates (docs/kubernetes.md "Objects at a glance", "Run pods",
 * docs/kubernetes.md "Image builds", "ConfigMaps", "Watch pods", "Services and routes"). Lookups and reaping select by label, never by name, so the label
 * keys below are the runner's contract with its own earlier processes: never rename them.
 */
import { createHash } from "node:crypto";

export const LABEL = {
  managedBy: "app.kubernetes.io/managed-by",
  sessionId: "telo.run/session-id",
  mode: "telo.run/mode",
  build: "telo.run/build",
  /** An unclaimed warm pool pod; a claim replaces it with the session's labels. */
  pool: "telo.run/pool",
} as const;

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

/** Content-addressed: a new workspace manifest means a new ConfigMap, never an update. */
export function workspaceConfigMapName(manifest: string): string {
  const hash = createHash("sha256").update(manifest, "utf8").digest("hex");
  return `${WORKSPACE_CONFIGMAP_PREFIX}${hash.slice(0, 12)}`;
}

export const WORKSPACE_CONFIGMAP_PREFIX = "telo-workspace-app-";

/** The public host of a routed tcp port; one wildcard DNS record and certificate cover all. */
export function sessionHost(port: number, sessionId: string, baseDomain: string): string {
  return `${port}-${sessionId}.${baseDomain}`;
}

export function managedByLabels(managedBy: string): Record<string, string> {
  return { [LABEL.managedBy]: managedBy };
}

export function sessionLabels(managedBy: string, sessionId: string): Record<string, string> {
  return { ...managedByLabels(managedBy), [LABEL.sessionId]: sessionId };
}

export function watchPodLabels(managedBy: string, sessionId: string): Record<string, string> {
  return { ...sessionLabels(managedBy, sessionId), [LABEL.mode]: "watch" };
}

export function poolLabels(managedBy: string): Record<string, string> {
  return { ...managedByLabels(managedBy), [LABEL.pool]: "true" };
}

export function buildLabels(managedBy: string): Record<string, string> {
  return { ...managedByLabels(managedBy), [LABEL.build]: "true" };
}

/** Everything this runner (under this managed-by value) created: the pod informer, boot adopt/reap, ConfigMap sweep. */
export function managedBySelector(managedBy: string): string {
  return `${LABEL.managedBy}=${managedBy}`;
}

/** One session's objects (its pods across recreations, its HTTPRoutes). */
export function sessionSelector(sessionId: string): string {
  return `${LABEL.sessionId}=${sessionId}`;
}

export function jobPodsSelector(jobName: string): string {
  return `${JOB_NAME_LABEL}=${jobName}`;
}
