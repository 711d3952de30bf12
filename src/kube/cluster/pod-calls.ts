/**
 * Every write the runner makes to a session pod, in one place, each with a deadline (client-node's
 * typed calls have none, so a hung apiserver would stall a start or a DELETE): the create,
 * retried on passing apiserver trouble; the delete, where 404 means done; the adoption's claim.
 * Every write is fenced by the session's ownership (docs/replicas.md "Fencing on the pod"): a
 * create stamps the writer's term, a delete and an update are conditional on the version whose
 * term was checked, and a refused fence lets the session go. One replica alone writes the same
 * way, under a writer that stamps nothing and is never refused.
 */
import type { V1DeleteOptions, V1Pod } from "@kubernetes/client-node";
import { setTimeout as sleep } from "node:timers/promises";
import * as v from "valibot";
import { FencedPodSchema, type FencedPod, type Writer, UNSHARDED, fencedDeleteOptions, fencedUpdate, termAnnotations, writeFenced } from "./fencing.ts";
import { SessionMoved, SessionStartError } from "../../sessions/backend-seam.ts";
import { withDeadline } from "./api.ts";
import type { KubeContext } from "../context.ts";
import { LABEL } from "../specs/names.ts";
import { apiReason, isConflict, isNotFound } from "../status/api-error.ts";
import { createRetryPause } from "../retry/create-retry.ts";

export const CALL_DEADLINE_MS = 30_000;

/**
 * Creates `body`, retrying a 429 or 5xx within `deadlineAt`; a 409 on a retry is the earlier
 * attempt's pod (the name is the session's own). Throws a SessionStartError at stage `create`.
 * Resolves with the created pod as the apiserver answered, or undefined when an earlier
 * attempt's answer was lost and the 409 said it had been created. Among replicas the pod is
 * created stamped with this replica's term on the session's shard; a create has no version to
 * be conditional on, so a replica that holds the shard no longer creates nothing.
 */
export async function createPod(ctx: KubeContext, body: V1Pod, deadlineAt: number, signal: AbortSignal): Promise<V1Pod | undefined> {
  const namespace = ctx.config.sessionPods.namespace;
  const stamped = stampedBody(ctx, body);
  for (let attempt = 1; ; attempt += 1) {
    try {
      return await withDeadline(ctx.api.core.createNamespacedPod({ namespace, body: stamped }), CALL_DEADLINE_MS, "the pod create call");
    } catch (error) {
      if (attempt > 1 && isConflict(error)) return undefined;
      const pause = signal.aborted ? undefined : createRetryPause(error, attempt, Date.now(), deadlineAt);
      if (pause === undefined) throw new SessionStartError("create", `could not create the session pod: ${apiReason(error)}`, { cause: error });
      ctx.log.warn("creating a session pod failed; trying again", { pod: body.metadata?.name, attempt, reason: apiReason(error) });
      await sleep(pause, undefined, { signal }).catch(() => undefined);
    }
  }
}

function stampedBody(ctx: KubeContext, body: V1Pod): V1Pod {
  const sessionId = body.metadata?.labels?.[LABEL.sessionId];
  const writer = sessionId === undefined ? undefined : ctx.ownership.writerFor(sessionId);
  if (!writer) throw new SessionStartError("create", "this runner replica no longer holds the session's shard; the session was not created");
  return { ...body, metadata: { ...body.metadata, annotations: { ...body.metadata?.annotations, ...termAnnotations(writer) } } };
}

/**
 * Deletes a pod at once (grace 0); a pod already gone counts as deleted. The delete is conditional
 * on the version whose term was checked (first the watch's copy, which costs no call; after a 409,
 * a fresh read); a refused fence throws SessionMoved.
 */
export async function deletePod(ctx: KubeContext, name: string): Promise<void> {
  const call = (body: V1DeleteOptions) => withDeadline(ctx.api.core.deleteNamespacedPod({ name, namespace: ctx.config.sessionPods.namespace, body }), CALL_DEADLINE_MS, "the pod delete call");
  try {
    await fencedWrite(ctx, name, "watch", (pod) => call(fencedDeleteOptions(pod)));
  } catch (error) {
    if (!isNotFound(error)) throw error;
  }
}

/**
 * A change to a session pod's metadata (its stream marks): a full update conditional on the
 * version read, read again after a 409, fenced like every other pod write, so a replica that lost
 * the session cannot make it, and stamped with this replica's term; `change` may throw to refuse
 * what it reads. `written`: a copy of the pod to try before any read (the adoption's claim); not
 * the watch's copy, which is trimmed (an update from it would drop the init containers). Returns
 * the pod as stored; undefined when it is gone.
 */
export async function updatePod(ctx: KubeContext, name: string, what: string, change: (pod: V1Pod) => void, written?: V1Pod): Promise<V1Pod | undefined> {
  const namespace = ctx.config.sessionPods.namespace;
  const replace = (body: V1Pod) => withDeadline(ctx.api.core.replaceNamespacedPod({ name, namespace, body }), CALL_DEADLINE_MS, what);
  let stored: V1Pod | undefined;
  await fencedWrite(ctx, name, written ?? "apiserver", async (pod, writer) => {
    stored = await replace(fencedUpdate(pod, writer, change));
  });
  return stored;
}

/** At most this many sessions' pods per list of readPods: a selector naming them must fit a request line. */
const READ_BATCH = 50;

/**
 * The pods of these sessions as the apiserver has them now, by name: one list per READ_BATCH
 * sessions (a set-based selector on the session label) rather than one per pod. A batch whose
 * list fails is left out; its pods are read one by one where they are needed.
 */
export async function readPods(ctx: KubeContext, sessionIds: readonly string[]): Promise<Map<string, V1Pod>> {
  const namespace = ctx.config.sessionPods.namespace;
  const batches = Array.from({ length: Math.ceil(sessionIds.length / READ_BATCH) }, (_, index) => sessionIds.slice(index * READ_BATCH, (index + 1) * READ_BATCH));
  const lists = await Promise.allSettled(
    batches.map((batch) => withDeadline(ctx.api.core.listNamespacedPod({ namespace, labelSelector: `${LABEL.sessionId} in (${batch.join(",")})` }), CALL_DEADLINE_MS, "reading the adopted sessions' pods")),
  );
  const pods = lists.flatMap((list) => (list.status === "fulfilled" ? list.value.items : []));
  return new Map(pods.map((pod) => [pod.metadata?.name ?? "", pod]));
}

/** A pod as the apiserver has it now, read by a list of one name (the manifests grant list on pods, not get). */
export async function readPod(ctx: KubeContext, name: string, what = "reading a session pod"): Promise<V1Pod | undefined> {
  const namespace = ctx.config.sessionPods.namespace;
  const listed = await withDeadline(ctx.api.core.listNamespacedPod({ namespace, fieldSelector: `metadata.name=${name}` }), CALL_DEADLINE_MS, what);
  return listed.items[0];
}

type FenceablePod = V1Pod & FencedPod;

/**
 * One fenced write (fencing.ts `writeFenced`): the writer is this replica's term on the pod's
 * session, or for a pod of no session UNSHARDED. Refused, the session is let go and SessionMoved
 * thrown; a pod that kept changing under every attempt is an error like any failed call. The
 * first attempt works on the watch's copy, a fresh read, or a copy this replica's own last write
 * stored; every attempt after a 409 on a fresh read.
 */
async function fencedWrite(ctx: KubeContext, name: string, firstRead: "watch" | "apiserver" | V1Pod, write: (pod: FenceablePod, writer: Writer) => Promise<unknown>): Promise<void> {
  let first = firstRead;
  const read = async (): Promise<FenceablePod | undefined> => {
    const known = typeof first === "object" ? first : first === "watch" ? ctx.watcher.get(name) : undefined;
    const pod = known ?? (await readPod(ctx, name));
    first = "apiserver";
    return pod && v.is(FencedPodSchema, pod) ? (pod as FenceablePod) : undefined;
  };
  let sessionId: string | undefined;
  const writerOf = (pod: FenceablePod) => {
    sessionId = pod.metadata.labels?.[LABEL.sessionId];
    return sessionId === undefined ? UNSHARDED : ctx.ownership.writerFor(sessionId);
  };
  const result = await writeFenced(writerOf, read, write, isConflict);
  if (result.written || "gone" in result) return;
  if ("conflicts" in result) throw new Error(`the pod ${name} changed under each of ${result.conflicts} conditional writes`);
  const stamped = "verdict" in result ? result.verdict.stamped : undefined;
  ctx.log.warn("a fenced pod write was refused: another runner replica has the pod's session now; this one lets it go", { pod: name, sessionId, stamped });
  if (sessionId !== undefined) ctx.ownership.lost(sessionId);
  throw new SessionMoved(`the pod ${name} is another runner replica's now`);
}
