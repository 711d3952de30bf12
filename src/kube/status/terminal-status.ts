/**
 * The terminal status of a finished session pod and the client-safe account of why a pod failed
 * (docs/kubernetes.md "Ends and failure messages").
 */
import type { V1ContainerState, V1Pod } from "@kubernetes/client-node";
import type { RunStatus } from "../../contract/wire.ts";
import { containerStatusesInOrder } from "./container-statuses.ts";
import { failureDetail } from "./failure-detail.ts";

export type TerminalStatus = Extract<RunStatus, { kind: "exited" | "failed" | "stopped" }>;

/** Normal waits on the way to running, not causes of a failure. */
const BENIGN_WAITS = new Set(["PodInitializing", "ContainerCreating"]);

/** Plain text within 500 characters that still names the cause (see failure-detail.ts). */
export function truncateDetail(detail: string): string {
  return failureDetail(detail);
}

function withDetail(text: string, detail: string | undefined): string {
  const shown = detail === undefined ? "" : truncateDetail(detail);
  return shown === "" ? text : `${text}: ${shown}`;
}

/** What one container state says about a failure, if anything. */
function stateFailure(state: V1ContainerState | undefined): string | undefined {
  const terminated = state?.terminated;
  if (terminated && terminated.exitCode !== 0) {
    const code = typeof terminated.exitCode === "number" ? String(terminated.exitCode) : "unknown";
    const reason = terminated.reason ? `${terminated.reason} ` : "";
    return withDetail(`failed: ${reason}(exit code ${code})`, terminated.message);
  }
  const waiting = state?.waiting;
  if (waiting?.reason && !BENIGN_WAITS.has(waiting.reason)) {
    return withDetail(`waiting: ${waiting.reason}`, waiting.message);
  }
  return undefined;
}

/**
 * Pod reasons under which the kubelet itself ended the containers (past activeDeadlineSeconds,
 * an eviction): their exits (143 for its SIGTERM, 137 for its SIGKILL) are its doing, so the
 * pod's own account is the cause.
 */
const KUBELET_ENDED = new Set(["DeadlineExceeded", "Evicted"]);

/** The pod's reason when the kubelet ended its containers, else undefined. */
export function kubeletEndReason(pod: V1Pod): string | undefined {
  const reason = pod.status?.reason;
  return reason !== undefined && KUBELET_ENDED.has(reason) ? reason : undefined;
}

function podOwnAccount(pod: V1Pod): string {
  const message = pod.status?.message ? truncateDetail(pod.status.message) : "";
  return message || pod.status?.reason || "pod failed";
}

/**
 * Why the pod failed: the kubelet's account when it ended the containers itself, else the first
 * failing container (init containers first; current state, then the last one), else the pod's
 * own message or reason, else `pod failed`.
 */
export function podFailureMessage(pod: V1Pod): string {
  if (kubeletEndReason(pod)) return podOwnAccount(pod);
  for (const { role, status } of containerStatusesInOrder(pod)) {
    const failure = stateFailure(status.state) ?? stateFailure(status.lastState);
    if (failure) return `${role} "${status.name}" ${failure}`;
  }
  return podOwnAccount(pod);
}

/** A user stop always reads as `stopped`, whatever the pod then reports. */
export function terminalStatus(pod: V1Pod, userStopped: boolean): TerminalStatus {
  if (userStopped) return { kind: "stopped" };
  if (pod.status?.phase === "Succeeded") {
    const exitCode = pod.status.containerStatuses?.[0]?.state?.terminated?.exitCode;
    return { kind: "exited", code: typeof exitCode === "number" ? exitCode : 0 };
  }
  return { kind: "failed", message: podFailureMessage(pod) };
}
