/**
 * The supervisor's side of several replicas (docs/replicas.md): the coordination made from the
 * configuration, the shared peer credential, and the hooks that move sessions between replicas.
 */
import type { CoreConfig } from "../config/core.ts";
import type { KubeRunnerConfig } from "../config/kube.ts";
import type { ReplicaSettings } from "../config/replicas.ts";
import type { KubeApi } from "../kube/cluster/api.ts";
import { stampLabels } from "../kube/specs/names.ts";
import type { Logger } from "../log.ts";
import { type CoordinatorHooks, ReplicaCoordinator, leasePrefix } from "../replicas/coordinator.ts";
import { LeaseStore } from "../replicas/lease-store.ts";
import { sharedPeerCredential } from "../replicas/peer-credential.ts";
import { PeerClients } from "./peer-clients.ts";
import { poolPeers } from "./pool-peers.ts";
import { HANDOVER_BOUND_MS, type SessionService } from "./session-service.ts";

/**
 * Undefined for one replica. For several: the core config with the peer credential filled in
 * (the operator's RUNNER_PEER_SECRET, else the one the replicas keep in the cluster), and the
 * coordination to run the supervisor with.
 */
export async function replicaCoordination(api: KubeApi, core: CoreConfig, kube: KubeRunnerConfig, settings: ReplicaSettings | undefined, log: Logger) {
  if (!settings) return undefined;
  const { namespace, ownerId } = kube.sessionPods;
  const secret = core.peer.secret ?? (await sharedPeerCredential(api, namespace, `${leasePrefix(ownerId)}-peer`, stampLabels(kube.sessionPods)));
  return {
    config: { ...core, peer: { ...core.peer, secret } },
    coordinate: (hooks: CoordinatorHooks) =>
      new ReplicaCoordinator({ store: new LeaseStore(api, namespace), settings, ownerId, credential: secret, hooks, log }),
  };
}

/**
 * Several replicas: the service admits and serves only the sessions of shards this replica
 * holds; shards it gains are adopted, shards it loses are let go, and the singleton duties
 * (reaping what no session explains, the warm pool's refill) run where the duties Lease is held.
 */
export function shareSessions(service: SessionService, coordinate: (hooks: CoordinatorHooks) => ReplicaCoordinator, log: Logger): ReplicaCoordinator {
  const peers = new PeerClients(() => coordinator.placement().credential);
  const inShards = (shards: number[]) => {
    const set = new Set(shards);
    return (sessionId: string) => set.has(coordinator.shardOf(sessionId));
  };
  const coordinator = coordinate({
    releasing: async (shards, unhurried) => {
      const count = await service.handOff(inShards(shards), unhurried ? undefined : HANDOVER_BOUND_MS);
      if (count > 0) log.info("sessions handed to other replicas", { count, shards });
    },
    acquired: async (shards) => {
      const count = await service.adoptSessions(inShards(shards));
      if (count > 0) log.info("adopted the sessions of acquired shards", { count, shards });
    },
    dutiesGained: async () => {
      log.info("this replica holds the singleton duties");
      await service.backend.housekeep?.();
    },
    dutiesLost: () => {
      log.info("this replica no longer holds the singleton duties");
      service.backend.dutiesLost?.();
    },
    shardsMoved: (addresses) => peers.tellShardsMoved(addresses),
  });
  service.backend.fenceWrites?.({
    writerFor: (sessionId) => coordinator.writerFor(sessionId),
    lost: (sessionId) => coordinator.fenceLost(sessionId),
  });
  service.backend.sharePool?.(poolPeers(coordinator, peers));
  service.shareWithReplicas({
    owns: (id) => coordinator.owns(id),
    mintSessionId: (newId) => coordinator.mintSessionId(newId),
    placement: () => coordinator.placement(),
    nudge: () => coordinator.nudge(),
  });
  return coordinator;
}
