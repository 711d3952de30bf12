/**
 * The Lease calls of the replicas, in one namespace: read, list, create, replace and delete, each
 * answer checked against the Lease schema. Every write is conditional (create fails on an
 * existing Lease, replace and delete carry the resourceVersion that was read), and losing that
 * race, a 409, is an answer (`undefined` / `false`), not an error: it means another replica wrote
 * first. Any other failure is thrown to the caller, which retries on its next period.
 */
import { V1MicroTime, type CoordinationV1Api, type V1Lease, type V1LeaseSpec } from "@kubernetes/client-node";
import * as v from "valibot";
import { isConflict, isNotFound } from "../kube/status/api-error.ts";
import { LeaseSchema, type Lease, type LeaseSpecOut } from "./lease-rules.ts";

/** Labels and annotations a replica puts on the Leases it creates and renews. */
export interface LeaseMeta {
  labels: Record<string, string>;
  annotations: Record<string, string>;
}

/**
 * The spec as client-node sends it: its MicroTime type renders six fractional digits (a plain
 * Date's three would be refused); the rules' times are whole milliseconds, so nothing is lost.
 */
function apiSpec(spec: LeaseSpecOut): V1LeaseSpec {
  return { ...spec, acquireTime: new V1MicroTime(Date.parse(spec.acquireTime)), renewTime: new V1MicroTime(Date.parse(spec.renewTime)) };
}

export class LeaseStore {
  readonly #api: { coordination: CoordinationV1Api };

  /** `api` is the caller's, so the runner gives it its counted, connection-reusing client (src/kube/cluster/api.ts). */
  constructor(
    api: { coordination: CoordinationV1Api },
    readonly namespace: string,
  ) {
    this.#api = api;
  }

  async read(name: string): Promise<Lease | undefined> {
    try {
      return v.parse(LeaseSchema, await this.#api.coordination.readNamespacedLease({ namespace: this.namespace, name }));
    } catch (err) {
      if (isNotFound(err)) return undefined;
      throw err;
    }
  }

  async list(labelSelector: string): Promise<Lease[]> {
    const list = await this.#api.coordination.listNamespacedLease({ namespace: this.namespace, labelSelector });
    return list.items.map((item) => v.parse(LeaseSchema, item));
  }

  /** Undefined when a Lease of that name already exists (another replica created it first). */
  async create(name: string, meta: LeaseMeta, spec: LeaseSpecOut): Promise<Lease | undefined> {
    const body: V1Lease = { apiVersion: "coordination.k8s.io/v1", kind: "Lease", metadata: { name, labels: meta.labels, annotations: meta.annotations }, spec: apiSpec(spec) };
    try {
      return v.parse(LeaseSchema, await this.#api.coordination.createNamespacedLease({ namespace: this.namespace, body }));
    } catch (err) {
      if (isConflict(err)) return undefined;
      throw err;
    }
  }

  /**
   * `current` with `spec` and `meta` written over it, stored only if the Lease is still at the
   * resourceVersion of `current`; undefined when it is not (409) or no longer exists.
   */
  async replace(current: Lease, meta: LeaseMeta, spec: LeaseSpecOut): Promise<Lease | undefined> {
    const { name, resourceVersion } = current.metadata;
    const body: V1Lease = {
      apiVersion: "coordination.k8s.io/v1",
      kind: "Lease",
      metadata: {
        name,
        resourceVersion,
        labels: { ...current.metadata.labels, ...meta.labels },
        annotations: { ...current.metadata.annotations, ...meta.annotations },
      },
      spec: apiSpec(spec),
    };
    try {
      return v.parse(LeaseSchema, await this.#api.coordination.replaceNamespacedLease({ namespace: this.namespace, name, body }));
    } catch (err) {
      // A Lease deleted since it was read is recreated by this PUT (the Lease registry lets a PUT
      // create), its term carried on from `current`; only a lost race comes back.
      if (isConflict(err)) return undefined;
      throw err;
    }
  }

  /** Deletes `current` if it is still at its resourceVersion; false when it changed or is gone. */
  async remove(current: Lease): Promise<boolean> {
    const { name, resourceVersion } = current.metadata;
    try {
      await this.#api.coordination.deleteNamespacedLease({ namespace: this.namespace, name, body: { preconditions: { resourceVersion } } });
      return true;
    } catch (err) {
      if (isConflict(err) || isNotFound(err)) return false;
      throw err;
    }
  }
}
