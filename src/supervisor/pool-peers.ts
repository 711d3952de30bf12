/**
 * The warm pool's view of the other replicas (docs/replicas.md "The warm pool beside several
 * replicas"): who is live, and the way a claim's answer reaches the replica that made the
 * claimed pod: the peer route `POST /internal/pool/:pod/claim` on that replica's supervisor,
 * over the same authenticated HTTP/2 peer link the api forwards sessions by.
 */
import { parsePeerAddress } from "../config/peer.ts";
import { routes } from "../contract/routes.ts";
import { SupervisorClient } from "../internal/client.ts";
import type { ReplicaCoordinator } from "../replicas/coordinator.ts";
import type { PoolPeers } from "../sessions/backend-seam.ts";

export function poolPeers(coordinator: ReplicaCoordinator): PoolPeers {
  // One connection per peer address, opened on first use; idle, it keeps no process alive.
  const clients = new Map<string, SupervisorClient>();
  return {
    identity: coordinator.identity,
    live: () => coordinator.liveMembers(),
    async handClaim(maker, pod, answer) {
      const address = coordinator.peerAddressOf(maker);
      if (address === undefined) throw new Error(`the replica ${maker} is no live member`);
      const target = parsePeerAddress(address);
      if (!target) throw new Error(`the replica ${maker} advertises '${address}', which is not IP:port`);
      let client = clients.get(address);
      if (!client) {
        client = new SupervisorClient({ ...target, credential: coordinator.placement().credential });
        clients.set(address, client);
      }
      await client.call(routes.poolClaim, { params: { pod }, body: { answer } });
    },
  };
}
