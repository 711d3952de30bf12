/**
 * Among replicas (docs/replicas.md "The warm pool beside several replicas"): the claimer's side
 * of a claim of a pool pod another replica made. Only the maker holds the pod's token and
 * answers its polls, so the claim's answer (the bundle URL on the claimer's listener and the
 * session's env values) is handed to it over the authenticated peer link.
 */
import type { PoolPeers } from "../../sessions/backend-seam.ts";
import { withDeadline } from "../cluster/api.ts";
import { deletePod } from "../cluster/pod-calls.ts";
import type { KubeContext } from "../context.ts";
import { UNDELIVERABLE_CLAIM } from "../specs/pool-pod.ts";
import { isPoolPod } from "./plan.ts";
import type { PoolClaims } from "./pool-claims.ts";
import { apiReason } from "../status/api-error.ts";

/** How long a claimer waits for the maker to take a claim's answer before the session starts cold. */
export const HAND_DEADLINE_MS = 5_000;

export type HandedClaim = { maker: string; pod: string; answer: string; sessionId: string };

/**
 * True once the maker took the answer. When it cannot (the maker is gone, unreachable or slow,
 * or holds no token for the pod), the pod, already the session's by its labels and so never
 * claimed again, is deleted under the claimer's term and the session starts cold. Its staged
 * bundle is dropped first, so that an answer the maker delivers late finds nothing to fetch
 * (the cold start stages the bundle anew, under a new token).
 */
export async function handClaimToMaker(ctx: KubeContext, peers: PoolPeers, claim: HandedClaim): Promise<boolean> {
  try {
    await withDeadline(peers.handClaim(claim.maker, claim.pod, claim.answer), HAND_DEADLINE_MS, "handing the claim's answer to the pod's maker");
    return true;
  } catch (error) {
    ctx.log.warn("the maker of a claimed warm pool pod did not take its answer; the session starts cold", {
      sessionId: claim.sessionId,
      pod: claim.pod,
      maker: claim.maker,
      reason: apiReason(error),
    });
    ctx.bundles.drop(claim.sessionId);
    await deletePod(ctx, claim.pod).catch((deleteError: unknown) => ctx.log.warn("deleting an abandoned warm pool pod failed", { pod: claim.pod, reason: apiReason(deleteError) }));
    return false;
  }
}

/**
 * The maker's side: a pod of its making that another replica claims gets its answer handed over
 * a moment after the claim. One whose answer has not come by the claim's fetch deadline (its
 * claimer died between the claim and the hand-over) is told that its claim cannot be delivered,
 * as after a restart, so it fails instead of waiting out its TTL, and its session's owner sees
 * the session end.
 */
export function awaitHandedAnswer(ctx: KubeContext, claims: PoolClaims, name: string): void {
  let timer: NodeJS.Timeout | undefined;
  const unsubscribe = ctx.watcher.subscribe(name, (pod) => {
    if (!pod || !claims.known(name)) {
      unsubscribe();
      clearTimeout(timer);
      return;
    }
    if (timer !== undefined || isPoolPod(pod)) return;
    timer = setTimeout(() => {
      unsubscribe();
      if (!claims.known(name) || claims.answered(name)) return;
      ctx.log.warn("a warm pool pod claimed elsewhere never got its answer; it is told its claim cannot be delivered", { pod: name });
      claims.deliver(name, Buffer.from(UNDELIVERABLE_CLAIM));
    }, ctx.timings.claimFetchDeadlineMs);
    timer.unref();
  });
}
