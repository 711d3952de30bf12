/**
 * A watch pod's state as its session sees it (kubernetes.md §4.3 step 2, §4.8): while bringing
 * it up, whether to keep waiting, go on, or fail; once up, when the session itself has ended.
 * App containers ending is a run outcome (see run-ended.ts), never a session end.
 */
import type { V1Pod } from "@kubernetes/client-node";
import { provisionMessage } from "./provision.ts";
import type { TerminalStatus } from "./terminal.ts";

export type BringUpState =
  | { kind: "waiting"; provision: string | undefined }
  | { kind: "running"; podIP: string }
  | { kind: "failed"; message: string };

/** The verdict of one read of the pod (`undefined`: the read found none, a 404). */
export function bringUpState(pod: V1Pod | undefined): BringUpState {
  if (!pod) return { kind: "failed", message: "pod disappeared before reaching Running" };
  const phase = pod.status?.phase;
  if (phase === "Failed" || phase === "Succeeded") return { kind: "failed", message: `pod reached ${phase} before serving` };
  // Running without an IP yet cannot be reached: keep waiting.
  if (phase === "Running" && pod.status?.podIP) return { kind: "running", podIP: pod.status.podIP };
  return { kind: "waiting", provision: provisionMessage(pod) };
}

/** The session's end once its pod has finished; undefined while the pod lives. */
export function watchSessionEnd(pod: V1Pod, userStopped: boolean): TerminalStatus | undefined {
  const phase = pod.status?.phase;
  if (phase !== "Failed" && phase !== "Succeeded") return undefined;
  return userStopped ? { kind: "stopped" } : { kind: "failed", message: `session pod reached ${phase}` };
}
