/**
 * A claimed warm pool pod that never fetches its session's bundle (docs/kubernetes.md "Warm pool"): the backend
 * in-process against the simulated cluster, so that the claim's fetch deadline can be short.
 * Real sockets throughout: the pool pod's shell long-polls this test's bundle listener, and the
 * simulated pod network loses every claim answer sent to that pod. The session ends saying so,
 * the pod goes, the pool refills, and the bundle was never served.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { PodWatcher } from "../../../src/kube/cluster/pod-watcher.ts";
import type { PoolClaims } from "../../../src/kube/pool/pool-claims.ts";
import { LABEL } from "../../../src/kube/specs/names.ts";
import { claimUnfetchedMessage } from "../../../src/kube/status/pool-claim.ts";
import type { Backend } from "../../../src/sessions/backend-seam.ts";
import type { SimulatedCluster } from "../../../src/sim/index.ts";
import { type InProcessBackend, SESSION_NAMESPACE as NAMESPACE, recorder, runSpec, startInProcessBackend } from "../../support/in-process-backend.ts";
import { waitFor } from "../../support/wait.ts";

const FETCH_DEADLINE_MS = 1_500;

describe("a claimed pool pod that never fetches its bundle", () => {
  let harness: InProcessBackend;
  let sim: SimulatedCluster;
  let backend: Backend;
  let watcher: PodWatcher;
  let claims: PoolClaims;

  beforeAll(async () => {
    harness = await startInProcessBackend({ warmPoolSize: 1, timings: { claimFetchDeadlineMs: FETCH_DEADLINE_MS } });
    ({ sim, backend, watcher } = harness);
    claims = harness.claims!;
  });
  afterAll(() => harness?.close());

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
    const { workload, running } = await backend.start(runSpec("fetchdeadlnx", { "report-start": true }), callbacks);
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
