/**
 * What a pod that has not reached Running is waiting on: named in the
 * start-deadline failure, and the kubelet's own words for a pull in trouble as progress.
 */
import type { V1Pod } from "@kubernetes/client-node";
import { containerStatusesInOrder } from "./container-statuses.ts";
import { truncateDetail } from "./terminal-status.ts";

/** Waiting reasons by which the kubelet says an image pull is failing or backing off. */
const PULL_TROUBLE = new Set(["ErrImagePull", "ImagePullBackOff", "ErrImageNeverPull", "InvalidImageName"]);

function withMessage(reason: string, message: string | undefined): string {
  const detail = message === undefined ? "" : truncateDetail(message);
  return detail === "" ? reason : `${reason}: ${detail}`;
}

/**
 * The first thing in the pod's way, init containers first: a container waiting (with the
 * kubelet's reason and message), an init container still running, or the scheduler's refusal.
 */
export function podWaitMessage(pod: V1Pod): string {
  for (const { role, status } of containerStatusesInOrder(pod)) {
    const waiting = status.state?.waiting;
    if (waiting?.reason) return `${role} "${status.name}" waiting: ${withMessage(waiting.reason, waiting.message)}`;
    if (role === "init container" && status.state?.running) return `${role} "${status.name}" still running`;
  }
  const scheduled = pod.status?.conditions?.find((condition) => condition.type === "PodScheduled");
  if (scheduled?.status === "False") return `not scheduled: ${withMessage(scheduled.reason ?? "Unschedulable", scheduled.message)}`;
  if (!scheduled && !pod.spec?.nodeName) return "not scheduled yet";
  return `pod ${pod.status?.phase ?? "Pending"}`;
}

/** The kubelet's words for an image pull in trouble (`ImagePullBackOff: Back-off pulling …`), if any. */
export function pullTrouble(pod: V1Pod): string | undefined {
  if (pod.status?.phase !== "Pending") return undefined;
  for (const { status } of containerStatusesInOrder(pod)) {
    const waiting = status.state?.waiting;
    if (waiting?.reason && PULL_TROUBLE.has(waiting.reason)) return `${status.name}: ${withMessage(waiting.reason, waiting.message)}`;
  }
  return undefined;
}
