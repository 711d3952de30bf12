/**
 * Run outcomes from the pod (docs/kubernetes.md "Ends and failure messages"): in a watch
 * session an `app-<name>` container that terminates ends that app's run, not the session (the
 * `workspace` container keeps the pod up); in a run session the pod's end ends the run.
 */
import type { V1ContainerStateTerminated, V1Pod } from "@kubernetes/client-node";
import type { RunOutcome } from "../../sessions/run-projection.ts";
import { APP_CONTAINER_PREFIX } from "../specs/names.ts";
import { kubeletEndReason, type TerminalStatus } from "./terminal-status.ts";

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

/** Container reasons of an app that ended by itself, whatever its code. */
const OWN_END = new Set(["Completed", "Error"]);

/**
 * How a run session's run ended, once its session ended with `status` (`pod`: its last copy, if
 * any). A real kernel reports no `Kernel.Stopped` when a run under `--inspect` ends, so this is
 * the run's end: `completed` with the code when the kernel's container exited by itself, else
 * `failed` with why (the kubelet killed it, it ran out of memory, the pod went, a stop).
 */
export function runSessionOutcome(status: TerminalStatus, pod: V1Pod | undefined, container: string): RunOutcome {
  if (status.kind === "exited") return { code: status.code };
  if (status.kind === "stopped") return { reason: "the session was stopped" };
  const terminated = pod?.status?.containerStatuses?.find((each) => each.name === container)?.state?.terminated;
  if (!terminated) return { reason: status.message };
  const killed = kubeletEndReason(pod!);
  if (!killed && typeof terminated.exitCode === "number" && OWN_END.has(terminated.reason ?? "Error")) return { code: terminated.exitCode };
  return { reason: runEndedReason(terminated, killed) };
}
