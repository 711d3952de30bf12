/**
 * Provision progress while a pod is Pending (docs/kubernetes.md "Start"): the first waiting reason among
 * init containers then containers, in words a user understands.
 */
import type { V1Pod } from "@kubernetes/client-node";
import { containerStatusesInOrder } from "./container-statuses.ts";

const HUMANISED: Record<string, string> = {
  ContainerCreating: "Creating container",
  PodInitializing: "Delivering application",
  ErrImagePull: "Pulling image",
  ImagePullBackOff: "Pulling image",
};

/** The progress message for a Pending pod; undefined in any other phase. */
export function provisionMessage(pod: V1Pod): string | undefined {
  if (pod.status?.phase !== "Pending") return undefined;
  for (const { status } of containerStatusesInOrder(pod)) {
    const reason = status.state?.waiting?.reason;
    if (reason) return HUMANISED[reason] ?? reason;
  }
  return "Scheduling";
}
