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
