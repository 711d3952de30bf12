/**
 * A claimed warm pool pod that never fetches its session's bundle (docs/kubernetes.md "Warm pool"): the backend
 * in-process against the simulated cluster, so that the claim's fetch deadline can be short.
 * Real sockets throughout: the pool pod's shell long-polls this test's bundle listener, and the
 * simulated pod network loses every claim answer sent to that pod. The session ends saying so,
 * the pod goes, the pool refills, and the bundle was never served.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { loadKubeConfig } from "../../../src/config/kube.ts";
import { kubeApi } from "../../../src/kube/cluster/api.ts";
import { createKubeBackend } from "../../../src/kube/backend.ts";
import { BundleStore } from "../../../src/kube/bundle/bundle-store.ts";
import { startBundleServer } from "../../../src/kube/bundle/bundle-server.ts";
import { DEFAULT_KUBE_TIMINGS } from "../../../src/kube/context.ts";
import { PodWatcher } from "../../../src/kube/cluster/pod-watcher.ts";
import { PoolClaims } from "../../../src/kube/pool/pool-claims.ts";
import { simulatedBehaviourAnnotations } from "../../../src/local-cluster/simulated-behaviour.ts";
import { LABEL, ownedObjects } from "../../../src/kube/specs/names.ts";
import { claimUnfetchedMessage } from "../../../src/kube/status/pool-claim.ts";
import { startLocalCluster } from "../../../src/local-cluster/index.ts";
import { createLogger } from "../../../src/log.ts";
import type { Backend, BackendCallbacks, StartSpec } from "../../../src/sessions/backend-seam.ts";
import type { SimulatedCluster } from "../../../src/sim/index.ts";
import { freePort } from "../../support/ports.ts";
import { waitFor } from "../../support/wait.ts";

const NAMESPACE = "telo-sessions";
const FETCH_DEADLINE_MS = 1_500;

function runSpec(sessionId: string): StartSpec {
  return {
    sessionId,
    createdAt: new Date().toISOString(),
    mode: "run",
    apps: [{ name: "app", entryRelativePath: "telo.yaml", ports: [], io: "tty" }],
    env: { GREETING: "hello" },
    config: { image: "telorun/node:latest-slim", pullPolicy: "missing", simulate: { "report-start": true } },
    bundle: { entryRelativePath: "telo.yaml", files: [{ relativePath: "telo.yaml", contents: "kind: Telo.Application\n" }] },
    inspect: false,
    selfContained: false,
  };
}

/** The statuses the backend reports, as the core would receive them. */
function recorder(): { statuses: unknown[]; callbacks: BackendCallbacks } {
  const statuses: unknown[] = [];
  const stop = new AbortController();
  return {
    statuses,
    callbacks: {
      emit: (event) => {
        if (event.type === "status") statuses.push(event.status);
      },
      isUserStopped: () => false,
      stopRequested: stop.signal,
    },
  };
}

describe("a claimed pool pod that never fetches its bundle", () => {
  let sim: SimulatedCluster;
  let backend: Backend;
  let watcher: PodWatcher;
  let bundles: BundleStore;
  let claims: PoolClaims;
  let listener: Awaited<ReturnType<typeof startBundleServer>>;

  beforeAll(async () => {
    const bundlePort = await freePort();
    const local = await startLocalCluster({ RUNNER_BUNDLE_PORT: String(bundlePort), RUNNER_WARM_POOL_SIZE: "1" }, { podStartDelayMs: 20, backoffMs: 200, events: false });
    sim = local.cluster;
    const config = loadKubeConfig(local.env);
    const api = kubeApi(sim.kubeConfig());
    const log = createLogger("test", "silent");
    bundles = new BundleStore(config.selfUrl);
    claims = new PoolClaims(config.selfUrl);
    listener = await startBundleServer(bundles, bundlePort, "127.0.0.1", claims);
    watcher = new PodWatcher(api, { namespace: NAMESPACE, ...ownedObjects(config.sessionPods) }, log);
    watcher.start();
    backend = createKubeBackend(
      {
        api,
        config,
        watcher,
        bundles,
        poolClaims: claims,
        router: undefined,
        builder: undefined,
        log,
        timings: { ...DEFAULT_KUBE_TIMINGS, claimFetchDeadlineMs: FETCH_DEADLINE_MS },
        extraPodAnnotations: simulatedBehaviourAnnotations,
      },
      { picker: undefined, catalog: new Map(), watchTtlSeconds: 600 },
    );
    // Boot: nothing to adopt; the pool starts filling.
    await backend.adoptSessions?.();
  });
  afterAll(async () => {
    await backend?.close?.();
    await listener?.close();
    await sim?.stop();
  });

  const poolPods = () => watcher.pods().filter((pod) => pod.metadata?.labels?.[LABEL.pool] === "true" && !pod.metadata.deletionTimestamp);
  /** The pool's pod once its shell has polled the claim route: a pod the pool claims. */
  const readyPoolPod = () =>
    waitFor("a ready pool pod", () => {
      const name = poolPods()[0]?.metadata?.name;
      return name !== undefined && claims.polled(name) ? name : undefined;
    });

  it("ends the session saying so, deletes the pod, and the pool refills", async () => {
    const name = await readyPoolPod();
    // Every claim answer to this pod is lost on its way: it polls again and again, and never gets it.
    sim.faults.loseDownloads({ namespace: NAMESPACE, pod: name, urlIncludes: "/internal/pool/", count: 1_000 });
    const { statuses, callbacks } = recorder();
    const { workload, running } = await backend.start(runSpec("fetchdeadlnx"), callbacks);
    // It ran: the pod was claimed (the pool pod's own name), running was reported at the claim.
    expect(running).toMatchObject({ kind: "running" });
    await waitFor("the claim in the watch", () => watcher.get(name)?.metadata?.labels?.[LABEL.sessionId] === "fetchdeadlnx" || undefined);
    await workload.done;
    expect(statuses.at(-1)).toEqual({ kind: "failed", message: claimUnfetchedMessage(FETCH_DEADLINE_MS) });
    expect(statuses).toHaveLength(1);
    // The claim answer did go out, and was lost.
    expect(sim.counters().lostDownloads).toBeGreaterThanOrEqual(1);
    await waitFor("the claimed pod to go", () => !watcher.get(name) || undefined);
    // The pool is back at its size with another pod.
    await waitFor("the pool refilled", () => poolPods().some((pod) => pod.metadata?.name !== name) || undefined);
    expect(poolPods()).toHaveLength(1);
    sim.faults.clear();
  });
});
