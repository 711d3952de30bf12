/**
 * The session engine's decisions (docs/kubernetes.md "The engine"): what one read of a session pod means, given where
 * the session stands and the time. Pure; the engine passes the clock in and acts on the answer.
 */
import type { V1Pod } from "@kubernetes/client-node";
import { podFailureMessage } from "./terminal-status.ts";
import { podWaitMessage } from "./waiting.ts";

export type SessionPhase =
  /**
   * On the way to Running. `finishedRan`: a pod that finished between two events still ran
   * (run sessions report it, then its end); a watch pod that ends before serving failed.
   * `needsIp`: serving means Running with an IP (a watch pod's workspace is dialled at it).
   * `seen`: the watch has reported the pod, so its absence now means it was deleted.
   */
  | { kind: "starting"; deadlineAt: number; needsIp: boolean; finishedRan: boolean; seen: boolean }
  | { kind: "live" };

export type PodDecision =
  | { kind: "wait" }
  | { kind: "ready"; pod: V1Pod }
  /** A run pod that ran and ended between two events: announce it, then end with `pod`. */
  | { kind: "ran"; pod: V1Pod }
  | { kind: "start-failed"; message: string }
  | { kind: "ended"; pod: V1Pod }
  | { kind: "gone" };

function finished(pod: V1Pod): boolean {
  const phase = pod.status?.phase;
  return phase === "Succeeded" || phase === "Failed";
}

function startDecision(pod: V1Pod | undefined, phase: Extract<SessionPhase, { kind: "starting" }>, now: number): PodDecision {
  if (!pod) {
    if (phase.seen) return { kind: "start-failed", message: "pod disappeared before reaching Running" };
    if (now >= phase.deadlineAt) return { kind: "start-failed", message: "pod did not reach Running within the start deadline (the pod watch has not seen it)" };
    return { kind: "wait" };
  }
  const podPhase = pod.status?.phase;
  if (finished(pod)) {
    if (phase.finishedRan && podPhase === "Succeeded") return { kind: "ran", pod };
    return { kind: "start-failed", message: phase.finishedRan ? podFailureMessage(pod) : `pod reached ${podPhase} before serving` };
  }
  if (podPhase === "Running" && (!phase.needsIp || pod.status?.podIP)) return { kind: "ready", pod };
  if (now >= phase.deadlineAt) return { kind: "start-failed", message: deadlineMessage(pod) };
  return { kind: "wait" };
}

/** Why a pod is past its start deadline; a Running one here is a watch pod still without an IP. */
function deadlineMessage(pod: V1Pod): string {
  if (pod.status?.phase === "Running") return "pod had no IP within the start deadline (it runs, but its workspace cannot be dialled)";
  return `pod did not reach Running within the start deadline (${podWaitMessage(pod)})`;
}

/**
 * `pod` is the watch's current copy (undefined: deleted, or not yet seen while starting).
 * Starting: ready, wait, or fail (ended early, disappeared, past the deadline). Live: ended
 * once it finished, gone once it disappeared.
 */
export function decidePod(pod: V1Pod | undefined, phase: SessionPhase, now: number): PodDecision {
  if (phase.kind === "starting") return startDecision(pod, phase, now);
  if (!pod) return { kind: "gone" };
  return finished(pod) ? { kind: "ended", pod } : { kind: "wait" };
}
