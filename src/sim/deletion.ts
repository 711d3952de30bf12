// Deletion as the apiserver performs it: graceful for running pods (deletionTimestamp first, the
// kubelet finishes the job), deferred while finalizers remain, and a namespace drains its
// contents before it goes. Propagation to dependents is the garbage collector's (gc.ts).
import { type KubeObject, timestamp } from "./object.ts";
import { lookupType, type ResourceType } from "./resources.ts";
import { conflictMessage, notFound } from "./status.ts";
import type { Store } from "./store.ts";

export interface DeleteOptions {
  gracePeriodSeconds?: number | undefined;
  propagationPolicy?: "Orphan" | "Background" | "Foreground" | undefined;
  preconditions?: { uid?: string | undefined; resourceVersion?: string | undefined } | undefined;
}

export interface DeleteResult {
  /** The object as stored after the request: gone (`deleted`) or marked for deletion. */
  object: KubeObject;
  deleted: boolean;
}

const POD = lookupType("", "v1", "pods")!;
const NAMESPACE = lookupType("", "v1", "namespaces")!;

export const ORPHAN_FINALIZER = "orphan";
export const FOREGROUND_FINALIZER = "foregroundDeletion";

function gracePeriod(type: ResourceType, obj: KubeObject, requested: number | undefined): number {
  if (type !== POD) return 0;
  // Unscheduled and finished pods have nothing to stop: they go at once.
  if (!obj.spec?.nodeName) return 0;
  const phase = obj.status?.phase;
  if (phase === "Succeeded" || phase === "Failed") return 0;
  const g = requested ?? obj.spec?.terminationGracePeriodSeconds ?? 30;
  // A second delete may shorten the grace period, never lengthen it.
  const current = obj.metadata.deletionGracePeriodSeconds;
  return current !== undefined ? Math.min(current, g) : g;
}

export function deleteObject(store: Store, type: ResourceType, namespace: string | undefined, name: string, opts: DeleteOptions = {}): DeleteResult {
  const obj = store.get(type, namespace, name);
  if (!obj) throw notFound({ group: type.group, plural: type.plural }, name);
  const pre = opts.preconditions;
  if (pre?.uid && pre.uid !== obj.metadata.uid) {
    throw conflictMessage({ group: type.group, plural: type.plural }, name, `Precondition failed: UID in precondition: ${pre.uid}, UID in object meta: ${obj.metadata.uid}`);
  }
  if (pre?.resourceVersion && pre.resourceVersion !== obj.metadata.resourceVersion) {
    throw conflictMessage({ group: type.group, plural: type.plural }, name, `Precondition failed: ResourceVersion in precondition: ${pre.resourceVersion}, ResourceVersion in object meta: ${obj.metadata.resourceVersion}`);
  }

  const finalizers = [...(obj.metadata.finalizers ?? [])];
  if (opts.propagationPolicy === "Orphan" && !finalizers.includes(ORPHAN_FINALIZER)) finalizers.push(ORPHAN_FINALIZER);
  if (opts.propagationPolicy === "Foreground" && !finalizers.includes(FOREGROUND_FINALIZER)) finalizers.push(FOREGROUND_FINALIZER);

  if (type === NAMESPACE) {
    const marked = store.mutate(type, undefined, name, (d) => {
      if (d.metadata.deletionTimestamp) return false;
      d.metadata.deletionTimestamp = timestamp();
      d.metadata.deletionGracePeriodSeconds = 0;
      d.status = { ...d.status, phase: "Terminating" };
    })!;
    return { object: marked, deleted: false };
  }

  const grace = gracePeriod(type, obj, opts.gracePeriodSeconds);
  if (grace > 0 || finalizers.length > 0) {
    const marked = store.mutate(type, namespace, name, (d) => {
      if (d.metadata.deletionTimestamp && d.metadata.deletionGracePeriodSeconds === grace && sameList(d.metadata.finalizers, finalizers)) return false;
      const now = Date.now();
      if (!d.metadata.deletionTimestamp) {
        // Setting deletionTimestamp is a change controllers must observe: generation goes up once.
        if ((d.metadata.generation ?? 0) > 0) d.metadata.generation! += 1;
        d.metadata.deletionTimestamp = timestamp(new Date(now + grace * 1000));
      } else if (grace < (d.metadata.deletionGracePeriodSeconds ?? 0)) {
        // A shorter grace period moves the deadline back by the difference, never into the past.
        const moved = Date.parse(d.metadata.deletionTimestamp) - ((d.metadata.deletionGracePeriodSeconds ?? 0) - grace) * 1000;
        d.metadata.deletionTimestamp = timestamp(new Date(Math.max(now, moved)));
      }
      d.metadata.deletionGracePeriodSeconds = grace;
      if (finalizers.length > 0) d.metadata.finalizers = finalizers;
    })!;
    return { object: marked, deleted: false };
  }
  return { object: store.remove(type, namespace, name)!, deleted: true };
}

function sameList(a: string[] | undefined, b: string[]): boolean {
  return JSON.stringify(a ?? []) === JSON.stringify(b);
}

/** After an update: an object marked for deletion whose finalizers are all gone is removed. */
export function finishIfFinalized(store: Store, type: ResourceType, obj: KubeObject): void {
  if (type === NAMESPACE) return;
  if (!obj.metadata.deletionTimestamp || (obj.metadata.finalizers?.length ?? 0) > 0) return;
  // A pod still inside its grace period is the kubelet's to remove.
  if (type === POD && (obj.metadata.deletionGracePeriodSeconds ?? 0) > 0) return;
  store.remove(type, obj.metadata.namespace, obj.metadata.name);
}
