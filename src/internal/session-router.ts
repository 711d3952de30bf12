/**
 * Which supervisor serves a session (docs/replicas.md): the local one, unless the runner runs as
 * several replicas and the session's shard is held by another, whose supervisor this api then
 * reaches directly over the authenticated peer link (one hop: a supervisor never forwards). The
 * placement comes from the local supervisor as it changes: the api asks with the version it knows
 * and is answered when there is another (docs/relay.md "The placement"); one replica answers once
 * that it runs alone. A session between owners (its supervisor answers `session_moving`, or the
 * peer that held it cannot be reached) is asked again as the placement moves, for a bounded time,
 * rather than refused: a browser's EventSource answered 503 gives up for good, and a terminal
 * refused backs off.
 */
import { isSessionMoving } from "../contract/problem.ts";
import { routes } from "../contract/routes.ts";
import type { PlacementAnswer } from "../contract/responses.ts";
import { SupervisorClient, SupervisorUnavailableError } from "./client.ts";
import { PeerClients } from "./peer-clients.ts";
import type { Logger } from "../log.ts";
import { shardOf } from "../contract/ids.ts";

/** After a failed ask (the supervisor restarting), the next one. */
const RETRY_MS = 250;
/** How often a session between owners is asked again when the placement has not changed meanwhile. */
const ASK_AGAIN_MS = 100;

/**
 * How long a request waits for its session to have an owner again before the client is refused
 * as before (`503 session_moving`, a terminal closed with `1012`). A call: under the 6 s the
 * Studio client gives its calls. A stream (SSE, terminal): past a default lease (15 s) and
 * retry period (2 s), so a killed owner's sessions are waited for too.
 */
export const MOVE_WAIT_MS = { call: 5_000, stream: 20_000 } as const;
export type MoveWait = keyof typeof MOVE_WAIT_MS;

export class SessionRouter {
  readonly #local: SupervisorClient;
  readonly #log: Logger;
  readonly #peers: PeerClients;
  #placement: PlacementAnswer = { shared: false };
  #timer: NodeJS.Timeout | undefined;
  /** Requests waiting for the placement to change. */
  readonly #waiting = new Set<() => void>();
  readonly #closed = new AbortController();

  constructor(local: SupervisorClient, credential: string | undefined, log: Logger) {
    this.#local = local;
    this.#log = log;
    // The operator's credential, else the one the supervisor passes on with the placement.
    this.#peers = new PeerClients(() => credential ?? (this.#placement.shared ? this.#placement.credential : ""));
  }

  /**
   * Follows the placement: each answer asks for the next change, until the supervisor says it
   * runs alone (one replica never becomes several: both containers read the pod's one
   * environment). A failed ask is made again a moment later (the supervisor may be restarting);
   * requests meanwhile go where the last placement says, and a wrong guess is a 503 and a retry.
   */
  start(): void {
    const ask = () => {
      if (this.#closed.signal.aborted) return;
      const known = this.#placement.shared ? String(this.#placement.version) : undefined;
      this.#local.call(routes.placement, { query: { after: known } }).then(
        (placement) => {
          const before = this.#placement;
          this.#placement = placement;
          if (placementMoved(before, placement)) for (const wake of this.#waiting) wake();
          if (placement.shared) ask();
        },
        () => {
          this.#timer = setTimeout(ask, RETRY_MS);
          this.#timer.unref();
        },
      );
    };
    ask();
  }

  /**
   * `attempt` against the supervisor that serves `sessionId` and, while the session is between
   * owners, again each time the placement changes (or every ASK_AGAIN_MS), for up to
   * MOVE_WAIT_MS[wait]; then the last refusal is thrown, as it would have been at once. One
   * replica, or a refusal of another kind (or the local supervisor away): thrown at once.
   * `signal`: the client went away, so the last refusal is thrown without waiting further.
   */
  async routed<T>(sessionId: string, wait: MoveWait, attempt: (supervisor: SupervisorClient) => Promise<T>, signal?: AbortSignal): Promise<T> {
    const deadline = Date.now() + MOVE_WAIT_MS[wait];
    for (;;) {
      const supervisor = this.supervisorFor(sessionId);
      try {
        return await attempt(supervisor);
      } catch (error) {
        const moving = isSessionMoving(error) || (supervisor !== this.#local && error instanceof SupervisorUnavailableError);
        if (!moving || !this.#placement.shared || Date.now() >= deadline || signal?.aborted || this.#closed.signal.aborted) throw error;
        await this.#placementChange(Math.min(ASK_AGAIN_MS, deadline - Date.now()), signal);
      }
    }
  }

  /** Resolves once the placement changes, after `ms` at the latest, or when `signal` (or closing) aborts. */
  #placementChange(ms: number, signal: AbortSignal | undefined): Promise<void> {
    return new Promise((resolve) => {
      const done = () => {
        clearTimeout(timer);
        this.#waiting.delete(done);
        signal?.removeEventListener("abort", done);
        this.#closed.signal.removeEventListener("abort", done);
        resolve();
      };
      const timer = setTimeout(done, ms);
      this.#waiting.add(done);
      signal?.addEventListener("abort", done, { once: true });
      this.#closed.signal.addEventListener("abort", done, { once: true });
    });
  }

  /** The supervisor serving `sessionId`; the local one for anything not about one session. */
  supervisorFor(sessionId?: string): SupervisorClient {
    const placement = this.#placement;
    if (sessionId === undefined || !placement.shared) return this.#local;
    const owner = placement.owners[shardOf(sessionId, placement.owners.length)];
    if (owner === null || owner === undefined || owner === placement.peerAddress) return this.#local;
    try {
      return this.#peers.to(owner);
    } catch (error) {
      this.#log.warn("a replica advertises an address that is not IP:port; its sessions are asked of the local supervisor", { address: owner, error });
      return this.#local;
    }
  }

  async close(): Promise<void> {
    clearTimeout(this.#timer);
    this.#closed.abort();
    await Promise.allSettled([this.#local.close(), this.#peers.close()]);
  }
}

/** Whether any shard's holder differs between two placements. */
function placementMoved(before: PlacementAnswer, after: PlacementAnswer): boolean {
  if (!before.shared || !after.shared) return before.shared !== after.shared;
  return before.owners.length !== after.owners.length || before.owners.some((owner, shard) => owner !== after.owners[shard]);
}
