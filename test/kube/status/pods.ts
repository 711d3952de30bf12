/** Realistic pod status shapes, as the kubelet reports them, for the status-rule tests. */
import type { V1ContainerState, V1ContainerStatus, V1Pod, V1PodStatus } from "@kubernetes/client-node";

export function containerStatus(
  name: string,
  state: V1ContainerState,
  extra: Partial<V1ContainerStatus> = {},
): V1ContainerStatus {
  return {
    name,
    image: name === "body-fetch" ? "busybox:stable" : "telorun/node:0.14.0-slim",
    imageID: "",
    ready: false,
    restartCount: 0,
    started: false,
    state,
    ...extra,
  };
}

export function pod(status: V1PodStatus): V1Pod {
  return {
    apiVersion: "v1",
    kind: "Pod",
    metadata: { name: "telo-run-k7m3qx4r2abc", namespace: "telo-sessions", uid: "5f0c7a52-1d2e-4a8b-9c3d-0e1f2a3b4c5d" },
    status,
  };
}

export const STARTED_AT = new Date("2026-11-29T16:30:05Z");
export const FINISHED_AT = new Date("2026-11-29T16:30:09Z");

export function terminated(exitCode: number, reason?: string, message?: string): V1ContainerState {
  return {
    terminated: {
      exitCode,
      ...(reason && { reason }),
      ...(message && { message }),
      startedAt: STARTED_AT,
      finishedAt: FINISHED_AT,
      containerID: "containerd://4b1f",
    },
  };
}

export function waiting(reason: string, message?: string): V1ContainerState {
  return { waiting: { reason, ...(message && { message }) } };
}

export const RUNNING: V1ContainerState = { running: { startedAt: STARTED_AT } };
