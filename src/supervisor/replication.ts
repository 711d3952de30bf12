/**
 * How this supervisor's sessions are owned (docs/replicas.md): alone, or among several replicas by
 * the Leases of their shards, with the shared peer credential; and the hooks through which either
 * moves sessions in and out of the session service.
 */
import type { CoreConfig } from "../config/core.ts";
import type { KubeRunnerConfig } from "../config/kube.ts";
import type { ReplicaSettings } from "../config/replicas.ts";
import type { KubeApi } from "../kube/cluster/api.ts";
import { stampLabels } from "../kube/specs/names.ts";
import { EXIT_BUDGET } from "../launch/shutdown.ts";
import type { Logger } from "../log.ts";
import { inSpan } from "../observability/tracing.ts";
import { ReplicaCoordinator, leasePrefix } from "../replicas/coordinator.ts";
import { LeaseStore } from "../replicas/lease-store.ts";
import { sharedPeerCredential } from "../replicas/peer-credential.ts";
import type { PoolPeers } from "../sessions/backend-seam.ts";
import type { OwnershipHooks, SessionOwnership } from "../sessions/ownership-seam.ts";
import { SoleOwnership } from "../sessions/sole-ownership.ts";
import { PeerClients } from "../internal/peer-clients.ts";
import { poolPeers } from "./pool-peers.ts";
import type { SessionService } from "./session-service.ts";

export type Ownership = {
  ownership: SessionOwnership;
  /** The core config, with the peer credential filled in among replicas. */
  config: CoreConfig;
  /** The warm pool's view of the other replicas; undefined alone. */
  poolPeers: PoolPeers | undefined;
};

/**
 * One replica (no replica settings): it owns every session. Several: the core config with the
 * peer credential filled in (the operator's RUNNER_PEER_SECRET, else the one the replicas keep in
 * the cluster) and the coordinator.
 */
export async function sessionOwnership(api: KubeApi, core: CoreConfig, kube: KubeRunnerConfig, settings: ReplicaSettings | undefined, log: Logger): Promise<Ownership> {
  const { namespace, ownerId } = kube.sessionPods;
  if (!settings) return { ownership: new SoleOwnership(), config: core, poolPeers: undefined };
  const secret = core.peer.secret ?? (await sharedPeerCredential(api, namespace, `${leasePrefix(ownerId)}-peer`, stampLabels(kube.sessionPods)));
  const peers = new PeerClients(() => secret);
  const coordinator = new ReplicaCoordinator({
    store: new LeaseStore(api, namespace),
    settings,
    ownerId,
    credential: secret,
    tellShardsMoved: (addresses) => peers.tellShardsMoved(addresses, EXIT_BUDGET.tellMs),
    log,
  });
  return { ownership: coordinator, config: { ...core, peer: { ...core.peer, secret } }, poolPeers: poolPeers(coordinator, peers) };
}

/**
 * Sessions in and out of the service as the ownership moves them; the duties to the backend.
 * Each handover, out or in, is a trace of its own (docs/tracing.md): its Kubernetes calls (the
 * stream marks saved on the pods, the pods listed and claimed) and the adopted sessions' starts
 * are its children.
 */
export function ownershipHooks(service: SessionService, log: Logger): OwnershipHooks {
  return {
    letGo: (which, unhurried) =>
      inSpan("handover.let_go", { attributes: { "k8s_runner.unhurried": unhurried } }, async (span) => {
        const count = await service.letGo(which, unhurried ? undefined : EXIT_BUDGET.letGoMs);
        span.setAttribute("k8s_runner.sessions", count);
        if (count > 0) log.info("sessions handed to other replicas", { count });
      }),
    takeOver: (which) =>
      inSpan("handover.take_over", {}, async (span) => {
        const count = await service.adoptSessions(which);
        span.setAttribute("k8s_runner.sessions", count);
        if (count > 0) log.info("took over sessions from their pods", { count });
      }),
    dutiesGained: async () => {
      log.info("this replica holds the singleton duties");
      await service.backend.housekeep?.();
    },
    dutiesLost: () => {
      log.info("this replica no longer holds the singleton duties");
      service.backend.dutiesLost?.();
    },
  };
}
