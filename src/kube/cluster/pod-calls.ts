/**
 * The two pod calls every session makes, each with a deadline (client-node's typed calls have
 * none, so a hung apiserver would stall a start or a DELETE): the create, retried on passing
 * apiserver trouble, and the delete, where 404 means done.
 */
import type { V1Pod } from "@kubernetes/client-node";
import { setTimeout as sleep } from "node:timers/promises";
import { SessionStartError } from "../../sessions/backend-seam.ts";
import { withDeadline } from "./api.ts";
import type { KubeContext } from "../context.ts";
import { apiReason, isConflict, isNotFound } from "../status/api-error.ts";
import { createRetryPause } from "../retry/create-retry.ts";

export const CALL_DEADLINE_MS = 30_000;

/**
 * Creates `body`, retrying a 429 or 5xx within `deadlineAt`; a 409 on a retry is the earlier
 * attempt's pod (the name is the session's own). Throws a SessionStartError at stage `create`.
 * Resolves with the created pod as the apiserver answered, or undefined when an earlier
 * attempt's answer was lost and the 409 said it had been created.
 */
export async function createPod(ctx: KubeContext, body: V1Pod, deadlineAt: number, signal: AbortSignal): Promise<V1Pod | undefined> {
  const namespace = ctx.config.sessionPods.namespace;
  for (let attempt = 1; ; attempt += 1) {
    try {
      return await withDeadline(ctx.api.core.createNamespacedPod({ namespace, body }), CALL_DEADLINE_MS, "the pod create call");
    } catch (error) {
      if (attempt > 1 && isConflict(error)) return undefined;
      const pause = signal.aborted ? undefined : createRetryPause(error, attempt, Date.now(), deadlineAt);
      if (pause === undefined) throw new SessionStartError("create", `could not create the session pod: ${apiReason(error)}`, { cause: error });
      ctx.log.warn("creating a session pod failed; trying again", { pod: body.metadata?.name, attempt, reason: apiReason(error) });
      await sleep(pause, undefined, { signal }).catch(() => undefined);
    }
  }
}

/** Deletes a pod at once (grace 0); a pod already gone counts as deleted. */
export async function deletePod(ctx: KubeContext, name: string): Promise<void> {
  try {
    await withDeadline(
      ctx.api.core.deleteNamespacedPod({ name, namespace: ctx.config.sessionPods.namespace, gracePeriodSeconds: 0 }),
      CALL_DEADLINE_MS,
      "the pod delete call",
    );
  } catch (error) {
    if (!isNotFound(error)) throw error;
  }
}
