/**
 * Connections to the replicas' supervisors (docs/replicas.md), over the authenticated HTTP/2 peer
 * link: one per peer address, opened on first use; idle, it keeps no process alive. The api
 * forwards sessions through them, and a supervisor tells the others of moved shards and hands
 * them warm-pool claims.
 */
import { parsePeerAddress } from "../config/peer.ts";
import { routes } from "../contract/routes.ts";
import { SupervisorClient } from "./client.ts";

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

  /** Every connection closed. */
  async close(): Promise<void> {
    await Promise.allSettled([...this.#clients.values()].map((client) => client.close()));
    this.#clients.clear();
  }

  /** Tells the replicas at `addresses` that shards changed hands; never fails, done or given up within `boundMs`. */
  async tellShardsMoved(addresses: string[], boundMs: number): Promise<void> {
    const told = Promise.allSettled(addresses.map(async (address) => this.to(address).call(routes.shardsMoved)));
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([told, new Promise((resolve) => (timer = setTimeout(resolve, boundMs)))]).finally(() => clearTimeout(timer));
  }
}
