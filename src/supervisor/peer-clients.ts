/**
 * This supervisor's connections to the other replicas' supervisors (docs/replicas.md), over the
 * same authenticated HTTP/2 peer link the api forwards sessions by: one per peer address, opened
 * on first use; idle, it keeps no process alive.
 */
import { parsePeerAddress } from "../config/peer.ts";
import { routes } from "../contract/routes.ts";
import { SupervisorClient } from "../internal/client.ts";
import { EXIT_BUDGET, within } from "../launch/shutdown.ts";

export class PeerClients {
  readonly #clients = new Map<string, SupervisorClient>();
  readonly #credential: () => string;

  constructor(credential: () => string) {
    this.#credential = credential;
  }

  /** The client for a replica's advertised address; throws for one that is not IP:port. */
  to(address: string): SupervisorClient {
    let client = this.#clients.get(address);
    if (client) return client;
    const target = parsePeerAddress(address);
    if (!target) throw new Error(`a replica advertises '${address}', which is not IP:port`);
    client = new SupervisorClient({ ...target, credential: this.#credential() });
    this.#clients.set(address, client);
    return client;
  }

  /** Tells the replicas at `addresses` that shards changed hands; never fails, bounded in time. */
  async tellShardsMoved(addresses: string[]): Promise<void> {
    await within(EXIT_BUDGET.tellMs, Promise.allSettled(addresses.map(async (address) => this.to(address).call(routes.shardsMoved))));
  }
}
