/**
 * The typed Kubernetes clients the backend uses, made once from a KubeConfig, and a deadline
 * for calls on the start path (client-node's typed calls have no timeout of their own).
 */
import {
  ApisApi,
  BatchV1Api,
  CoordinationV1Api,
  CoreV1Api,
  CustomObjectsApi,
  type KubeConfig,
  NetworkingV1Api,
  Watch,
} from "@kubernetes/client-node";
import { countedApiClient } from "../../metrics/kube-client.ts";
import { reusingConnections } from "./connection-reuse.ts";

export type KubeApi = {
  kubeConfig: KubeConfig;
  core: CoreV1Api;
  networking: NetworkingV1Api;
  batch: BatchV1Api;
  /** Leases of the replicas (src/replicas/). */
  coordination: CoordinationV1Api;
  custom: CustomObjectsApi;
  apis: ApisApi;
  watch: Watch;
};

export function kubeApi(kubeConfig: KubeConfig): KubeApi {
  // One set of kept-alive connections for all the typed clients.
  const authentication = reusingConnections(kubeConfig);
  return {
    kubeConfig,
    core: countedApiClient(kubeConfig, CoreV1Api, authentication),
    networking: countedApiClient(kubeConfig, NetworkingV1Api, authentication),
    batch: countedApiClient(kubeConfig, BatchV1Api, authentication),
    coordination: countedApiClient(kubeConfig, CoordinationV1Api, authentication),
    custom: countedApiClient(kubeConfig, CustomObjectsApi, authentication),
    apis: countedApiClient(kubeConfig, ApisApi, authentication),
    watch: new Watch(kubeConfig),
  };
}

/** Settles like `call`, or rejects with a timeout once `ms` pass (the call is not cancelled). */
export function withDeadline<T>(call: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout;
  const deadline = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what} did not answer within ${ms / 1000}s`)), ms);
  });
  return Promise.race([call, deadline]).finally(() => clearTimeout(timer));
}
