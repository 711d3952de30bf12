/**
 * The Kubernetes backend run inside a test process against a simulated cluster of its own, for
 * tests that need a timing the runner's processes fix (a short re-attach pause, a short claim
 * fetch deadline). Real sockets throughout: the simulated apiserver, the pod watch, the bundle
 * listener the pods fetch from.
 */
import { loadKubeConfig } from "../../src/config/kube.ts";
import { kubeApi } from "../../src/kube/cluster/api.ts";
import { PodWatcher } from "../../src/kube/cluster/pod-watcher.ts";
import { createKubeBackend } from "../../src/kube/backend.ts";
import { BundleStore } from "../../src/kube/bundle/bundle-store.ts";
import { startBundleServer } from "../../src/kube/bundle/bundle-server.ts";
import { DEFAULT_KUBE_TIMINGS, type KubeTimings } from "../../src/kube/context.ts";
import { PoolClaims } from "../../src/kube/pool/pool-claims.ts";
import { ownedObjects } from "../../src/kube/specs/names.ts";
import { startLocalCluster } from "../../src/local-cluster/index.ts";
import { simulatedBehaviourAnnotations } from "../../src/local-cluster/simulated-behaviour.ts";
import { createLogger } from "../../src/log.ts";
import type { AdoptionCeiling, Backend, BackendCallbacks, StartSpec } from "../../src/sessions/backend-seam.ts";
import { adoptedStreamBase } from "../../src/sessions/session.ts";
import { adoptionCeiling, firstIdsAfter } from "../../src/sessions/stream-marks.ts";
import type { SimulatedCluster } from "../../src/sim/index.ts";
import { freePort } from "./ports.ts";
import { SoleOwnership } from "../../src/sessions/sole-ownership.ts";

export const SESSION_NAMESPACE = "telo-sessions";

/** The ceiling the supervisor's adoption claims (src/supervisor/adoption.ts), for a test that adopts through the backend alone. */
export const ADOPTION_CEILING: AdoptionCeiling = (saved, apps) => adoptionCeiling(firstIdsAfter(saved, adoptedStreamBase(Date.now())), apps);

export type InProcessBackend = {
  sim: SimulatedCluster;
  backend: Backend;
  watcher: PodWatcher;
  /** The warm pool's claims, when it runs one. */
  claims: PoolClaims | undefined;
  close(): Promise<void>;
};

/** `warmPoolSize`: a warm pool of that many pods (none without); `timings` over the defaults. */
export async function startInProcessBackend(options: { warmPoolSize?: number; timings?: Partial<KubeTimings> } = {}): Promise<InProcessBackend> {
  const bundlePort = await freePort();
  const pool = options.warmPoolSize === undefined ? {} : { RUNNER_WARM_POOL_SIZE: String(options.warmPoolSize) };
  const local = await startLocalCluster({ RUNNER_BUNDLE_PORT: String(bundlePort), ...pool }, { podStartDelayMs: 20, backoffMs: 200, events: false });
  const sim = local.cluster;
  const config = loadKubeConfig(local.env);
  const api = kubeApi(sim.kubeConfig());
  const log = createLogger("test", "silent");
  const bundles = new BundleStore(config.selfUrl);
  const claims = options.warmPoolSize === undefined ? undefined : new PoolClaims(config.selfUrl);
  const listener = await startBundleServer(bundles, bundlePort, "127.0.0.1", claims);
  const watcher = new PodWatcher(api, { namespace: SESSION_NAMESPACE, ...ownedObjects(config.sessionPods) }, log);
  watcher.start();
  const backend = createKubeBackend(
    {
      api,
      config,
      watcher,
      bundles,
      poolClaims: claims,
      router: undefined,
      builder: undefined,
      log,
      timings: { ...DEFAULT_KUBE_TIMINGS, ...options.timings },
      extraPodAnnotations: simulatedBehaviourAnnotations,
      ownership: new SoleOwnership(),
    },
    { picker: undefined, catalog: new Map(), watchTtlSeconds: 600, poolPeers: undefined, sweepMinAgeMs: 0 },
  );
  // Boot: nothing to adopt; a warm pool, if configured, starts filling.
  await backend.adoptSessions?.(ADOPTION_CEILING, () => true);
  await backend.housekeep?.();
  return {
    sim,
    backend,
    watcher,
    claims,
    async close() {
      await backend.close?.();
      await listener.close();
      await sim.stop();
    },
  };
}

/** A run session of one tty app, with the simulated behaviours `simulate` names. */
export function runSpec(sessionId: string, simulate: Record<string, string | boolean>): StartSpec {
  return {
    sessionId,
    createdAt: new Date().toISOString(),
    mode: "run",
    apps: [{ name: "app", entryRelativePath: "telo.yaml", ports: [], io: "tty" }],
    env: { GREETING: "hello" },
    config: { image: "telorun/node:latest-slim", pullPolicy: "missing", simulate },
    bundle: { entryRelativePath: "telo.yaml", files: [{ relativePath: "telo.yaml", contents: "kind: Telo.Application\n" }] },
    inspect: false,
    selfContained: false,
  };
}

/** What the backend reports, as the core would receive it: the statuses and the terminal's text. */
export function recorder(): { statuses: unknown[]; text: () => string; callbacks: BackendCallbacks } {
  const statuses: unknown[] = [];
  const chunks: Buffer[] = [];
  const stop = new AbortController();
  return {
    statuses,
    text: () => Buffer.concat(chunks).toString("utf8"),
    callbacks: {
      emit: (event) => {
        if (event.type === "status") statuses.push(event.status);
        if (event.type === "output") chunks.push(Buffer.from(event.bytes));
      },
      isUserStopped: () => false,
      stopRequested: stop.signal,
    },
  };
}
