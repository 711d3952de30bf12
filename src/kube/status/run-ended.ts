/**
 * Run outcomes of watch sessions (docs/kubernetes.md "Watch pods"): an `app-<name>` container that
 * terminates ends that app's run, not the session (the `workspace` container keeps the pod up).
 */
import type { V1ContainerStateTerminated, V1Pod } from "@kubernetes/client-node";
import { APP_CONTAINER_PREFIX } from "../specs/names.ts";
import { kubeletEndReason } from "./terminal-status.ts";

export interface AppRunEnd {
  /** The app name (container name without `app-`). */
  app: string;
  reason: string;
}

/**
 * `application container <reason> (exit code n)`, or `… exited (code n)` for a plain exit. The
 * reason is the pod's when the kubelet ended the container (`DeadlineExceeded`: on a real node
 * the container itself only says `Error`, exit code 143, of the kubelet's SIGTERM).
 */
export function runEndedReason(terminated: V1ContainerStateTerminated, podReason?: string): string {
  const code = typeof terminated.exitCode === "number" ? String(terminated.exitCode) : "unknown";
  const reason = podReason ?? terminated.reason;
  if (reason && reason !== "Completed") {
    return `application container ${reason} (exit code ${code})`;
  }
  return `application container exited (code ${code})`;
}

/**
 * Every app container of the pod that has terminated, in status order. The caller reports each
 * app once per pod (the same termination is seen on every later event).
 */
export function appRunEnds(pod: V1Pod): AppRunEnd[] {
  return (pod.status?.containerStatuses ?? []).flatMap((status) => {
    const terminated = status.state?.terminated;
    if (!status.name.startsWith(APP_CONTAINER_PREFIX) || !terminated) return [];
    return [{ app: status.name.slice(APP_CONTAINER_PREFIX.length), reason: runEndedReason(terminated, kubeletEndReason(pod)) }];
  });
}
