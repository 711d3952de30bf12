// Shared test plumbing: a simulated cluster per test file, typed clients, and polling with a
// deadline (no sleeps standing in for events, no timing assertions).
import { AppsV1Api, BatchV1Api, CoreV1Api, CustomObjectsApi, NetworkingV1Api, type KubeConfig } from "@kubernetes/client-node";
import { afterAll, beforeAll } from "vitest";
import { startSimulatedCluster, type SimulatedCluster, type SimulatedClusterOptions } from "../../src/sim/index.ts";

export interface Clients {
  cluster: SimulatedCluster;
  kc: KubeConfig;
  core: CoreV1Api;
  batch: BatchV1Api;
  networking: NetworkingV1Api;
  custom: CustomObjectsApi;
  apps: AppsV1Api;
}

/** Starts one cluster for the file (stopped after it) and hands back live clients. */
export function useCluster(options: SimulatedClusterOptions = {}): Clients {
  const holder = {} as Clients;
  beforeAll(async () => {
    holder.cluster = await startSimulatedCluster({ podStartDelayMs: 20, backoffMs: 100, ...options });
    holder.kc = holder.cluster.kubeConfig();
    holder.core = holder.kc.makeApiClient(CoreV1Api);
    holder.batch = holder.kc.makeApiClient(BatchV1Api);
    holder.networking = holder.kc.makeApiClient(NetworkingV1Api);
    holder.custom = holder.kc.makeApiClient(CustomObjectsApi);
    holder.apps = holder.kc.makeApiClient(AppsV1Api);
  });
  afterAll(async () => {
    await holder.cluster?.stop();
  });
  return holder;
}

/** The Kubernetes Status carried by a client-node ApiException. */
export async function statusOf(p: Promise<unknown>): Promise<{ code: number; reason: string; message: string; details?: Record<string, unknown> }> {
  try {
    await p;
  } catch (err) {
    const e = err as { code?: number; body?: unknown };
    const body = typeof e.body === "string" ? JSON.parse(e.body) : e.body;
    return { ...body, code: e.code };
  }
  throw new Error("expected the request to fail");
}

let counter = 0;
/** A fresh namespace per test keeps tests in one file independent. */
export async function freshNamespace(c: Clients, labels: Record<string, string> = {}): Promise<string> {
  const name = `t${Date.now().toString(36)}-${counter++}`;
  await c.core.createNamespace({ body: { metadata: { name, labels } } });
  return name;
}

export function pod(name: string, extra: { annotations?: Record<string, string>; spec?: Record<string, unknown>; container?: Record<string, unknown>; labels?: Record<string, string> } = {}) {
  return {
    apiVersion: "v1",
    kind: "Pod",
    metadata: { name, annotations: extra.annotations ?? {}, labels: extra.labels ?? {} },
    spec: {
      restartPolicy: "Never",
      containers: [{ name: "main", image: "busybox:1.36", ...(extra.container ?? {}) }],
      ...(extra.spec ?? {}),
    },
  };
}
