/**
 * When a serving watch pod's session has ended (kubernetes.md §4.8); its bring-up is the
 * engine's (pod-decision.ts). App containers ending is a run outcome (see run-ended.ts), never
 * a session end.
 */
import type { V1Pod } from "@kubernetes/client-node";
import type { TerminalStatus } from "./terminal.ts";

/** The session's end once its pod has finished; undefined while the pod lives. */
export function watchSessionEnd(pod: V1Pod, userStopped: boolean): TerminalStatus | undefined {
  const phase = pod.status?.phase;
  if (phase !== "Failed" && phase !== "Succeeded") return undefined;
  return userStopped ? { kind: "stopped" } : { kind: "failed", message: `session pod reached ${phase}` };
}
