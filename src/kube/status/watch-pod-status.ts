/**
 * When a serving watch pod's session has ended (docs/kubernetes.md "Watch pods"); its bring-up is the
 * engine's (pod-decision.ts). App containers ending is a run outcome (see run-ended.ts), never
 * a session end.
 */
import type { V1Pod } from "@kubernetes/client-node";
import { kubeletEndReason, podFailureMessage, type TerminalStatus } from "./terminal-status.ts";

/**
 * The session's end once its pod has finished; undefined while the pod lives. When the kubelet
 * ended the pod itself (past its deadline, an eviction) its account is the cause, told as a run
 * session tells it; any other end names the phase (the workspace container ending, say).
 */
export function watchSessionEnd(pod: V1Pod, userStopped: boolean): TerminalStatus | undefined {
  const phase = pod.status?.phase;
  if (phase !== "Failed" && phase !== "Succeeded") return undefined;
  if (userStopped) return { kind: "stopped" };
  if (kubeletEndReason(pod) !== undefined) return { kind: "failed", message: podFailureMessage(pod) };
  return { kind: "failed", message: `session pod reached ${phase}` };
}
