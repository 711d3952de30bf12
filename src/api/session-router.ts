/**
 * Which supervisor serves a session (docs/replicas.md): the local one, unless the runner runs as
 * several replicas and the session's shard is held by another, whose supervisor this api then
 * reaches directly over the authenticated peer link (one hop: a supervisor never forwards). The
 * placement comes from the local supervisor, re-read every refresh period; a placement a moment
 * old reaches a replica that answers 503 `session_moving`, and the client's retry finds the owner.
 */
import { parsePeerAddress } from "../config/peer.ts";
import { routes } from "../contract/routes.ts";
import type { PlacementAnswer } from "../contract/responses.ts";
import { SupervisorClient } from "../internal/client.ts";
import type { Logger } from "../log.ts";
import { shardOf } from "../replicas/rendezvous.ts";

/** A quarter second: a moved shard is found within it (a local call of a few hundred bytes). */
const REFRESH_MS = 250;

export class SessionRouter {
  readonly #local: SupervisorClient;
  readonly #credential: string | undefined;
  readonly #log: Logger;
  readonly #peers = new Map<string, SupervisorClient>();
  #placement: PlacementAnswer = { shared: false };
  #timer: NodeJS.Timeout | undefined;

  constructor(local: SupervisorClient, credential: string | undefined, log: Logger) {
    this.#local = local;
    this.#credential = credential;
    this.#log = log;
  }

  /**
   * Reads the placement now and every refresh period after (the timer keeps no process alive),
   * until the supervisor says it runs alone: one replica never becomes several (both containers
   * read the pod's one environment), so it is not asked again.
   */
  start(): void {
    const tick = () => {
      void this.refresh().then((answered) => {
        if (answered && !this.#placement.shared) return;
        this.#timer = setTimeout(tick, REFRESH_MS);
        this.#timer.unref();
      });
    };
    tick();
  }

  /** One read of the placement, true when it came; a failed read keeps the last one (the supervisor may be restarting). */
  async refresh(): Promise<boolean> {
    try {
      this.#placement = await this.#local.call(routes.placement);
      return true;
    } catch {
      // Requests meanwhile go where the last placement says; a wrong guess is a 503 and a retry.
      return false;
    }
  }

  /** The supervisor serving `sessionId`; the local one for anything not about one session. */
  supervisorFor(sessionId?: string): SupervisorClient {
    const placement = this.#placement;
    if (sessionId === undefined || !placement.shared) return this.#local;
    const owner = placement.owners[shardOf(sessionId, placement.owners.length)];
    if (owner === null || owner === undefined || owner === placement.peerAddress) return this.#local;
    return this.#peer(owner, this.#credential ?? placement.credential);
  }

  async close(): Promise<void> {
    clearTimeout(this.#timer);
    await Promise.allSettled([this.#local, ...this.#peers.values()].map((client) => client.close()));
  }

  #peer(address: string, credential: string): SupervisorClient {
    let client = this.#peers.get(address);
    if (client) return client;
    const target = parsePeerAddress(address);
    if (!target) {
      this.#log.warn("a replica advertises an address that is not IP:port; its sessions are asked of the local supervisor", { address });
      return this.#local;
    }
    client = new SupervisorClient({ ...target, credential });
    this.#peers.set(address, client);
    return client;
  }
}
