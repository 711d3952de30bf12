/**
 * Two runners with different identities (RUNNER_OWNER_ID) against one cluster, the same session
 * namespace and the same managed-by label (docs/ownership.md): each keeps its own sessions and
 * warm pods across a restart of either, and neither adopts, pools nor reaps the other's. One of
 * them is left at the default identity, which also owns pods written before the owner label
 * existed. Runs on the simulated cluster in `npm test` and on the real one in `npm run test:cluster`.
 */
import type { V1Pod } from "@kubernetes/client-node";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { LABEL } from "../../src/kube/specs/names.ts";
import { type ClusterRunner, ON_REAL_CLUSTER, SESSION_NAMESPACE, echoes, runningSession, startClusterRunner } from "../support/kube-runner.ts";
import { scrape, valueOf } from "../support/metrics.ts";
import { eventsUntil } from "../support/streams.ts";
import { waitFor } from "../support/wait.ts";
import { auditedWrites } from "../support/write-audit.ts";

// A real pool pod takes seconds to pull, copy its shell and start on a busy 2-core machine.
const READY_MS = ON_REAL_CLUSTER ? 90_000 : 20_000;
const POOL = { RUNNER_WARM_POOL_SIZE: "1" };

describe(`two runners with different identities on one ${ON_REAL_CLUSTER ? "real" : "simulated"} cluster`, () => {
  let named: ClusterRunner;
  let unnamed: ClusterRunner;
  const sessions = { named: "", unnamed: "" };

  beforeAll(async () => {
    named = await startClusterRunner({ env: { ...POOL, RUNNER_OWNER_ID: "runner-a" } });
    // RUNNER_OWNER_ID unset: the default identity, as a single-runner install runs.
    unnamed = await startClusterRunner({ env: POOL, beside: named });
  });
  afterAll(async () => {
    // Pool pods outlive their supervisor by design; with both stopped nothing refills.
    await unnamed?.stopSupervisor();
    await named?.stopSupervisor();
    if (named) {
      await named.core.deleteCollectionNamespacedPod({ namespace: SESSION_NAMESPACE, labelSelector: `${LABEL.managedBy}=telo-k8s-runner`, gracePeriodSeconds: 0 });
      await waitFor("every pod to be gone", async () => (await named.sessionPods()).length === 0 || undefined, READY_MS);
    }
    // The first runner's cluster is the one both use: it goes last.
    await unnamed?.close();
    await named?.close();
  });

  // A failure here has been seen only on a machine loaded far past its cores: the pod writes
  // the apiserver took (who deleted what, and when) are what would explain one.
  afterEach(async (context) => {
    if (context.task.result?.state !== "fail" || !named) return;
    const writes = (await auditedWrites(named, SESSION_NAMESPACE)).filter((write) => write.resource === "pods");
    console.log(`[owners] pod writes before "${context.task.name}" failed:\n${writes.map((write) => JSON.stringify(write)).join("\n")}`);
  });

  const pods = async (): Promise<V1Pod[]> => (await named.core.listNamespacedPod({ namespace: SESSION_NAMESPACE })).items;
  const ownerOf = (pod: V1Pod | undefined) => pod?.metadata?.labels?.[LABEL.owner];
  /** Names of the live pods labelled with `owner`, sorted. */
  const podsOf = async (owner: string) =>
    (await pods())
      .filter((pod) => ownerOf(pod) === owner && !pod.metadata?.deletionTimestamp)
      .map((pod) => pod.metadata?.name ?? "")
      .sort();
  const sessionPod = async (sessionId: string) => (await pods()).find((pod) => pod.metadata?.labels?.[LABEL.sessionId] === sessionId);
  const poolReady = (runner: ClusterRunner) =>
    waitFor("a ready pool pod", async () => valueOf(await scrape(runner.baseUrl), "runner_warm_pool_pods", { state: "ready" }) === 1 || undefined, READY_MS);
  /** A restart with SIGKILL: nothing is handed over, the next supervisor decides from the pods alone. */
  const restart = async (runner: ClusterRunner) => {
    await runner.stopSupervisor("SIGKILL");
    await runner.startSupervisor();
    await poolReady(runner);
  };

  it("stamps each runner's session and pool pods with its identity, and each knows only its own sessions", async () => {
    await Promise.all([poolReady(named), poolReady(unnamed)]);
    sessions.named = await runningSession(named);
    sessions.unnamed = await runningSession(unnamed);
    expect(ownerOf(await sessionPod(sessions.named))).toBe("runner-a");
    expect(ownerOf(await sessionPod(sessions.unnamed))).toBe("default");
    // Each pool refilled its own: one unclaimed pod per identity, not one for both.
    await Promise.all([poolReady(named), poolReady(unnamed)]);
    const unclaimed = (await pods()).filter((pod) => pod.metadata?.labels?.[LABEL.pool] === "true").map(ownerOf).sort();
    expect(unclaimed).toEqual(["default", "runner-a"]);
    await expect(named.client.getSession(sessions.unnamed)).rejects.toMatchObject({ status: 404 });
    await expect(unnamed.client.getSession(sessions.named)).rejects.toMatchObject({ status: 404 });
  });

  it.each([
    ["the named runner", () => named, () => unnamed, "runner-a", "default"],
    ["the default runner", () => unnamed, () => named, "default", "runner-a"],
  ] as const)("keeps both runners' sessions and warm pods across a restart of %s", async (_label, restarted, other, own, others) => {
    const before = { own: await podsOf(own), others: await podsOf(others) };
    // A session pod and a pool pod each.
    expect([before.own.length, before.others.length]).toEqual([2, 2]);
    await restart(restarted());
    // Its own pods adopted (none reaped, none added: the pool is full with them), the other's untouched.
    expect(await podsOf(own)).toEqual(before.own);
    expect(await podsOf(others)).toEqual(before.others);
    const [mine, theirs] = restarted() === named ? [sessions.named, sessions.unnamed] : [sessions.unnamed, sessions.named];
    expect((await restarted().client.getSession(mine)).status.kind).toBe("running");
    await echoes(restarted(), mine, `adopted-${own}`);
    await expect(restarted().client.getSession(theirs)).rejects.toMatchObject({ status: 404 });
    expect((await other().client.getSession(theirs)).status.kind).toBe("running");
    await echoes(other(), theirs, `untouched-${others}`);
  });

  it("gives a pod without the owner label to the default identity: re-adopted by it, left alone by the named one", async () => {
    const pod = await sessionPod(sessions.unnamed);
    const name = pod?.metadata?.name ?? "";
    // As a runner from before the owner label wrote it.
    await named.core.patchNamespacedPod({ name, namespace: SESSION_NAMESPACE, body: [{ op: "remove", path: `/metadata/labels/${LABEL.owner.replace("/", "~1")}` }] });
    expect(ownerOf(await sessionPod(sessions.unnamed))).toBeUndefined();

    await restart(named);
    expect((await sessionPod(sessions.unnamed))?.metadata?.deletionTimestamp).toBeUndefined();
    await expect(named.client.getSession(sessions.unnamed)).rejects.toMatchObject({ status: 404 });

    await restart(unnamed);
    expect((await unnamed.client.getSession(sessions.unnamed)).status.kind).toBe("running");
    await echoes(unnamed, sessions.unnamed, "unlabelled-adopted");

    for (const [runner, sessionId] of [[named, sessions.named], [unnamed, sessions.unnamed]] as const) {
      await runner.client.deleteSession(sessionId);
      await eventsUntil(runner.client, sessionId);
    }
  });
});
