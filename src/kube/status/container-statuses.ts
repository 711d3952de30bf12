/** The container statuses of a pod in the order every status rule scans them: init containers first. */
import type { V1ContainerStatus, V1Pod } from "@kubernetes/client-node";

export interface LabelledContainerStatus {
  /** `init container` or `container`, as failure messages name it. */
  role: "init container" | "container";
  status: V1ContainerStatus;
}

export function containerStatusesInOrder(pod: V1Pod): LabelledContainerStatus[] {
  return [
    ...(pod.status?.initContainerStatuses ?? []).map((status) => ({ role: "init container" as const, status })),
    ...(pod.status?.containerStatuses ?? []).map((status) => ({ role: "container" as const, status })),
  ];
}
