/**
 * The maker's side of the warm pool beside several replicas (docs/replicas.md "The warm pool
 * beside several replicas"): the backend in-process as a replica holding the duties, against the
 * simulated cluster, so that the claim's fetch deadline can be short. Real sockets throughout:
 * the pool pods' shells long-poll this test's bundle listener. The test plays a claimer that
 * died between its claim (the pod relabelled as its session's) and the hand-off of the answer:
 * the maker tells the pod its claim cannot be delivered, and so does a maker that restarted.
 */
import { CoreV1Api, type V1Pod } from "@kubernetes/client-node";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { loadKubeConfig, type KubeRunnerConfig } from "../../../src/config/kube.ts";
import { type KubeApi, kubeApi } from "../../../src/kube/cluster/api.ts";
import { createKubeBackend } from "../../../src/kube/backend.ts";
import { BundleStore } from "../../../src/kube/bundle/bundle-store.ts";
import { startBundleServer } from "../../../src/kube/bundle/bundle-server.ts";
import { DEFAULT_KUBE_TIMINGS } from "../../../src/kube/context.ts";
import { PodWatcher } from "../../../src/kube/cluster/pod-watcher.ts";
import { PoolClaims } from "../../../src/kube/pool/pool-claims.ts";
import { simulatedBehaviourAnnotations } from "../../../src/local-cluster/simulated-behaviour.ts";
import { LABEL, ownedObjects } from "../../../src/kube/specs/names.ts";
import { sessionRecordAnnotation } from "../../../src/kube/specs/session-record.ts";
import { startLocalCluster } from "../../../src/local-cluster/index.ts";
import { createLogger } from "../../../src/log.ts";
import type { Backend } from "../../../src/sessions/backend-seam.ts";
import type { SimulatedCluster } from "../../../src/sim/index.ts";
import { freePort } from "../../support/ports.ts";
import { waitFor } from "../../support/wait.ts";
import { SoleOwnership } from "../../../src/sessions/sole-ownership.ts";

const NAMESPACE = "telo-sessions";
const FETCH_DEADLINE_MS = 1_500;
const MAKER = "replica-m";
const UNDELIVERED = "this session was claimed by a runner that restarted before delivering its application";

/** One supervisor's backend as the maker replica: its listener, its claims, its pod watch. */
type Maker = { backend: Backend; watcher: PodWatcher; close(): Promise<void> };

async function startMaker(api: KubeApi, config: KubeRunnerConfig, bundlePort: number, duties: boolean): Promise<Maker> {
  const log = createLogger("test", "silent");
  const bundles = new BundleStore(config.selfUrl);
  const claims = new PoolClaims(config.selfUrl);
  const listener = await startBundleServer(bundles, bundlePort, "127.0.0.1", claims);
  const watcher = new PodWatcher(api, { namespace: NAMESPACE, ...ownedObjects(config.sessionPods) }, log);
  watcher.start();
  const ownership = new SoleOwnership();
  const context = { api, config, watcher, bundles, poolClaims: claims, router: undefined, builder: undefined, log, extraPodAnnotations: simulatedBehaviourAnnotations, ownership };
  // A replica of an installation whose other members are gone; no claimer is reachable.
  const poolPeers = { identity: MAKER, live: () => new Set([MAKER]), handClaim: () => Promise.reject(new Error("no claimer here")) };
  const backend = createKubeBackend(
    { ...context, timings: { ...DEFAULT_KUBE_TIMINGS, claimFetchDeadlineMs: FETCH_DEADLINE_MS } },
    { picker: undefined, catalog: new Map(), watchTtlSeconds: 600, poolPeers, sweepMinAgeMs: 0 },
  );
  if (duties) await backend.housekeep?.();
  return {
    backend,
    watcher,
    close: async () => {
      await backend.close?.();
      await listener.close();
    },
  };
}

describe("a pool pod claimed by a replica that died before handing the answer over", () => {
  let sim: SimulatedCluster;
  let api: KubeApi;
  let core: CoreV1Api;
  let config: KubeRunnerConfig;
  let bundlePort: number;
  let maker: Maker;

  beforeAll(async () => {
    bundlePort = await freePort();
    const local = await startLocalCluster({ RUNNER_BUNDLE_PORT: String(bundlePort), RUNNER_WARM_POOL_SIZE: "1" }, { podStartDelayMs: 20, backoffMs: 200, events: false });
    sim = local.cluster;
    config = loadKubeConfig(local.env);
    api = kubeApi(sim.kubeConfig());
    core = sim.kubeConfig().makeApiClient(CoreV1Api);
    maker = await startMaker(api, config, bundlePort, true);
  });
  afterAll(async () => {
    await maker?.close();
    await sim?.stop();
  });

  /** The pool's running pod, made by the maker (its label says so). */
  const runningPoolPod = () =>
    waitFor("a running pool pod of the maker", async () => {
      const pods = (await core.listNamespacedPod({ namespace: NAMESPACE, labelSelector: `${LABEL.pool}=true` })).items;
      const pod = pods.find((candidate) => !candidate.metadata?.deletionTimestamp && candidate.status?.phase === "Running");
      return pod && pod.metadata?.labels?.[LABEL.poolMaker] === MAKER ? pod : undefined;
    });

  /** What a claimer's conditional replace writes, and then nothing: the claimer died. */
  const claimAndDie = async (pod: V1Pod, sessionId: string) => {
    const record = sessionRecordAnnotation({ sessionId, mode: "run", createdAt: new Date().toISOString(), apps: [{ name: "app", entryRelativePath: "telo.yaml", ports: [], io: "tty" }], inspect: false, selfContained: false, config: {}, envNames: [] });
    const fresh = (await core.listNamespacedPod({ namespace: NAMESPACE, fieldSelector: `metadata.name=${pod.metadata!.name!}` })).items[0]!;
    await core.replaceNamespacedPod({
      name: pod.metadata!.name!,
      namespace: NAMESPACE,
      body: { ...fresh, metadata: { ...fresh.metadata, labels: { [LABEL.managedBy]: "telo-k8s-runner", [LABEL.sessionId]: sessionId }, annotations: { ...fresh.metadata?.annotations, ...record } } },
    });
  };

  /** The pod failed with the runner's own words in its log. */
  const failsUndelivered = async (name: string) => {
    await waitFor(`the pod ${name} to fail`, async () => {
      const pods = (await core.listNamespacedPod({ namespace: NAMESPACE, fieldSelector: `metadata.name=${name}` })).items;
      return pods[0]?.status?.phase === "Failed" || undefined;
    });
    const log = await core.readNamespacedPodLog({ name, namespace: NAMESPACE, container: "session" });
    expect(log).toContain(UNDELIVERED);
  };

  it("is told by its maker, after the claim's fetch deadline, that its claim cannot be delivered", async () => {
    const pod = await runningPoolPod();
    const claimedAt = Date.now();
    await claimAndDie(pod, "handdiedzabc");
    await failsUndelivered(pod.metadata!.name!);
    // Not before the deadline: a hand-off arriving within it would still have been delivered.
    expect(Date.now() - claimedAt).toBeGreaterThanOrEqual(FETCH_DEADLINE_MS);
  });

  it("is told so by its maker after the maker restarted, as one replica tells it at boot", async () => {
    const pod = await runningPoolPod();
    await maker.close();
    await claimAndDie(pod, "handdied2abc");
    // The same identity and listener, a new process's memory; not (yet) the duties holder, whose
    // housekeeping would tell the pod too.
    maker = await startMaker(api, config, bundlePort, false);
    await failsUndelivered(pod.metadata!.name!);
  });
});
