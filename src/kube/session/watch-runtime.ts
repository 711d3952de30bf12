/**
 * What one live watch pod holds (docs/kubernetes.md "Watch pods"): its terminals, relays and route health.
 * Cleared on teardown, so a late callback of an old pod finds nothing.
 */
import type { V1Pod } from "@kubernetes/client-node";
import type { AppFollower } from "./relays.ts";
import type { SessionPod } from "./session-pod.ts";
import type { ContainerTerminal } from "./container-terminal.ts";
import { type PodWorkspaceClient, workspaceClient } from "./workspace-client.ts";

export type WatchRuntime = {
  pod: SessionPod;
  podUid: string;
  podIp: string;
  workspace: PodWorkspaceClient;
  terminals: Map<string, ContainerTerminal>;
  followers: Map<string, AppFollower>;
  /** Aborts relays, reachability and route health of this pod. */
  abort: AbortController;
  /** Route health of the last publish; replaced on every republish. */
  routeHealth: AbortController | undefined;
  /** Set once the bring-up is over: the pod's changes are the session's from then on. */
  serving: boolean;
  /** Apps whose container end was reported for this pod (docs/kubernetes.md "Watch pods": once per container per pod). */
  ended: Set<string>;
};

/** The runtime of a pod that runs with an IP. */
export function watchRuntime(pod: SessionPod, current: V1Pod): WatchRuntime {
  const podIp = current.status!.podIP!;
  return {
    pod,
    podUid: current.metadata?.uid ?? "",
    podIp,
    workspace: workspaceClient(podIp),
    terminals: new Map(),
    followers: new Map(),
    abort: new AbortController(),
    routeHealth: undefined,
    serving: false,
    ended: new Set(),
  };
}

/** Stops following the pod and everything fed from it, without deleting it. */
export function releaseWatchRuntime(runtime: WatchRuntime): void {
  runtime.pod.release();
  runtime.abort.abort();
  for (const terminal of runtime.terminals.values()) terminal.close();
  runtime.terminals.clear();
}
