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
  /** Sent on every call and on the attach streams, so the apiserver's audit tells replicas apart. */
  userAgent: string | undefined;
  core: CoreV1Api;
  networking: NetworkingV1Api;
  batch: BatchV1Api;
  /** Leases of the replicas (src/replicas/). */
  coordination: CoordinationV1Api;
  custom: CustomObjectsApi;
  apis: ApisApi;
  watch: Watch;
};

/**
 * `userAgent` names this process in the apiserver's audit log: a replica sends its identity
 * (docs/replicas.md), so the writes of each replica can be told apart there.
 */
export function kubeApi(kubeConfig: KubeConfig, userAgent?: string): KubeApi {
  // One set of kept-alive connections for all the typed clients.
  const authentication = reusingConnections(kubeConfig);
  return {
    kubeConfig,
    userAgent,
    core: countedApiClient(kubeConfig, CoreV1Api, authentication, userAgent),
    networking: countedApiClient(kubeConfig, NetworkingV1Api, authentication, userAgent),
    batch: countedApiClient(kubeConfig, BatchV1Api, authentication, userAgent),
    coordination: countedApiClient(kubeConfig, CoordinationV1Api, authentication, userAgent),
    custom: countedApiClient(kubeConfig, CustomObjectsApi, authentication, userAgent),
    apis: countedApiClient(kubeConfig, ApisApi, authentication, userAgent),
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
