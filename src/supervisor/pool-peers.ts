/**
 * The warm pool's view of the other replicas (docs/replicas.md "The warm pool beside several
 * replicas"): who is live, and the way a claim's answer reaches the replica that made the
 * claimed pod: the peer route `POST /internal/pool/:pod/claim` on that replica's supervisor,
 * over the same authenticated HTTP/2 peer link the api forwards sessions by.
 */
import { routes } from "../contract/routes.ts";
import type { ReplicaCoordinator } from "../replicas/coordinator.ts";
import type { PoolPeers } from "../sessions/backend-seam.ts";
import type { PeerClients } from "../internal/peer-clients.ts";

export function poolPeers(coordinator: ReplicaCoordinator, peers: PeerClients): PoolPeers {
  return {
    identity: coordinator.identity,
    live: () => coordinator.liveMembers(),
    async handClaim(maker, pod, answer) {
      const address = coordinator.peerAddressOf(maker);
      if (address === undefined) throw new Error(`the replica ${maker} is no live member`);
      await peers.to(address).call(routes.poolClaim, { params: { pod }, body: { answer } });
    },
  };
}
