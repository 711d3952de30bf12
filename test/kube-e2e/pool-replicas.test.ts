/**
 * The warm pool beside several replicas (docs/replicas.md "The warm pool beside several
 * replicas"): three replicas with RUNNER_WARM_POOL_SIZE=2 against one cluster. The duties holder
 * keeps the pool and is each pool pod's maker (its label); a session admitted on another replica
 * claims one and hands the answer to the maker over the peer link; concurrent claims on several
 * replicas never take one pod twice; a SIGKILLed maker's pods are replaced by the next duties
 * holder, and a SIGTERMed one hands the duties over. Real processes, their HTTP, the cluster's
 * API; nothing mocked.
 */
import type { V1Pod } from "@kubernetes/client-node";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parsePeerAddress } from "../../src/config/peer.ts";
import { RunnerError } from "../../src/contract/problem.ts";
import { routes } from "../../src/contract/routes.ts";
import { SupervisorClient, SupervisorUnavailableError } from "../../src/internal/client.ts";
import { LABEL } from "../../src/kube/specs/names.ts";
import { type ClusterRunner, ON_REAL_CLUSTER, SESSION_NAMESPACE, echoes, kubeSessionBody } from "../support/kube-runner.ts";
import { scrape, valueOf } from "../support/metrics.ts";
import { eventsOf, eventsUntil, isStatus } from "../support/streams.ts";
import { type ReplicaSet, startReplicaSet } from "../support/replica-set.ts";
import { waitFor } from "../support/wait.ts";

const SHARDS = 8;
const LEASE_SECONDS = 3;
const POOL_SIZE = 2;
const START_MS = ON_REAL_CLUSTER ? 90_000 : 20_000;

describe(`the warm pool beside three replicas on the ${ON_REAL_CLUSTER ? "real" : "simulated"} cluster`, () => {
  let set: ReplicaSet;
  const replicas: Record<string, ClusterRunner> = {};
  /** Replicas whose supervisor is still running. */
  const up = new Set(["a", "b", "c"]);

  beforeAll(async () => {
    set = await startReplicaSet(["a", "b", "c"], { shards: SHARDS, leaseSeconds: LEASE_SECONDS, startMs: START_MS, env: { RUNNER_WARM_POOL_SIZE: String(POOL_SIZE) } });
    Object.assign(replicas, set.replicas);
  }, 4 * START_MS);
  afterAll(() => set?.close());

  const dutiesHolder = async () => {
    const lease = await set.leases.readNamespacedLease({ namespace: SESSION_NAMESPACE, name: "telo-runner-default-duties" });
    return lease.spec?.holderIdentity?.replace(/^replica-/, "");
  };
  const poolPods = async (): Promise<V1Pod[]> =>
    (await replicas.a!.core.listNamespacedPod({ namespace: SESSION_NAMESPACE, labelSelector: `${LABEL.pool}=true` })).items.filter((pod) => !pod.metadata?.deletionTimestamp);
  const makerOf = (pod: V1Pod) => pod.metadata?.labels?.[LABEL.poolMaker];
  const sessionPods = async (sessionId: string) =>
    (await replicas.a!.core.listNamespacedPod({ namespace: SESSION_NAMESPACE, labelSelector: `${LABEL.sessionId}=${sessionId}` })).items.filter((pod) => !pod.metadata?.deletionTimestamp);
  const readyOn = async (name: string) => valueOf(await scrape(replicas[name]!.baseUrl), "runner_warm_pool_pods", { state: "ready" });
  const warmStarts = async (names: string[]) => {
    let total = 0;
    for (const name of names) total += valueOf(await scrape(replicas[name]!.baseUrl), "runner_warm_pool_starts_total", { start: "warm" });
    return total;
  };
  /** The duties holder's name once the pool is full of its pods, ready as every running replica sees it. */
  const fullPoolOf = (notMaker?: string) =>
    waitFor(
      "a full pool of the duties holder's pods, ready on every replica",
      async () => {
        const holder = await dutiesHolder();
        if (holder === undefined || holder === notMaker || !up.has(holder)) return undefined;
        const pods = await poolPods();
        if (pods.length !== POOL_SIZE || !pods.every((pod) => makerOf(pod) === `replica-${holder}`)) return undefined;
        for (const name of up) if ((await readyOn(name)) !== POOL_SIZE) return undefined;
        return holder;
      },
      START_MS,
    );

  it("marks each pool pod with its maker, the duties holder, and serves a session admitted on another replica from it", async () => {
    const maker = await fullPoolOf();
    const pooled = new Set((await poolPods()).map((pod) => pod.metadata?.name));
    const via = [...up].find((name) => name !== maker)!;
    const before = await warmStarts([via]);
    const { sessionId } = await replicas[via]!.client.createSession(kubeSessionBody());
    await eventsUntil(replicas[via]!.client, sessionId, isStatus("running"));
    const [pod] = await sessionPods(sessionId);
    // The claimed pod is one the maker made; the claimer counted a warm start.
    expect(pooled.has(pod?.metadata?.name)).toBe(true);
    expect(await warmStarts([via])).toBe(before + 1);
    await echoes(replicas[via]!, sessionId, "warm-through-claimer");
    await echoes(replicas[maker]!, sessionId, "warm-through-maker");
    expect((await sessionPods(sessionId)).map((p) => p.metadata?.uid)).toEqual([pod?.metadata?.uid]);
    await replicas[via]!.client.deleteSession(sessionId);
  });

  it("refuses a claim answer handed over without the credential, malformed, or for a pod the replica did not make", async () => {
    const maker = await fullPoolOf();
    const member = await set.leases.readNamespacedLease({ namespace: SESSION_NAMESPACE, name: `telo-runner-default-member-replica-${maker}` });
    const target = parsePeerAddress(member.metadata?.annotations?.["telo.run/peer-address"] ?? "")!;
    const secret = await replicas.a!.core.readNamespacedSecret({ namespace: SESSION_NAMESPACE, name: "telo-runner-default-peer" });
    const credential = Buffer.from(secret.data?.credential ?? "", "base64").toString();
    const [pod] = await poolPods();
    const hand = async (client: SupervisorClient, body: unknown, name = pod!.metadata!.name!) => {
      try {
        return await client.call(routes.poolClaim, { params: { pod: name }, body: body as { answer: string } });
      } finally {
        await client.close();
      }
    };
    const status = (error: unknown) => (error instanceof RunnerError ? error.status : error);
    await expect(hand(new SupervisorClient({ ...target, credential: "x".repeat(40) }), { answer: "exit 0\n" })).rejects.toThrow(SupervisorUnavailableError);
    await expect(hand(new SupervisorClient({ ...target, credential }), { answer: "" }).catch(status)).resolves.toBe(400);
    await expect(hand(new SupervisorClient({ ...target, credential }), { answer: 42 }).catch(status)).resolves.toBe(400);
    await expect(hand(new SupervisorClient({ ...target, credential }), { answer: "exit 0\n" }, "telo-pool-nosuchpod").catch(status)).resolves.toBe(404);
    // None of it reached the pod: it is still in the pool, ready.
    expect((await poolPods()).map((p) => p.metadata?.name)).toContain(pod!.metadata!.name);
    expect(await readyOn(maker)).toBe(POOL_SIZE);
  });

  it("never claims one pod twice when several replicas admit sessions at once", async () => {
    await fullPoolOf();
    const before = await warmStarts([...up]);
    // Two admissions on each replica at once: more than the pool holds, all racing for its oldest pod.
    const vias = [...up, ...up];
    const created = await Promise.all(vias.map((name) => replicas[name]!.client.createSession(kubeSessionBody())));
    await Promise.all(created.map(({ sessionId }, index) => eventsUntil(replicas[vias[index]!]!.client, sessionId, isStatus("running"))));
    const podNames = await Promise.all(
      created.map(async ({ sessionId }) => {
        const pods = await sessionPods(sessionId);
        expect(pods).toHaveLength(1);
        return pods[0]!.metadata!.name!;
      }),
    );
    expect(new Set(podNames).size).toBe(created.length);
    const warm = (await warmStarts([...up])) - before;
    expect(warm).toBeGreaterThanOrEqual(1);
    expect(warm).toBe(podNames.filter((name) => name.startsWith("telo-pool-")).length);
    for (const [index, { sessionId }] of created.entries()) await echoes(replicas[vias[index]!]!, sessionId, `concurrent-${index}`);
    await Promise.all(created.map(({ sessionId }, index) => replicas[vias[index]!]!.client.deleteSession(sessionId)));
  });

  it("starts a session cold when the maker of the pod it claimed is gone, and replaces that maker's pods from the next duties holder", async () => {
    const maker = await fullPoolOf();
    const pooled = new Set((await poolPods()).map((pod) => pod.metadata?.name));
    await replicas[maker]!.stopSupervisor("SIGKILL");
    up.delete(maker);
    // At once, while the others still count the maker live (a lease duration): the claim of its
    // pod cannot hand the answer over, so the claimed pod goes and the session starts cold.
    const via = [...up][0]!;
    const { sessionId } = await replicas[via]!.client.createSession(kubeSessionBody());
    const events = eventsOf(await eventsUntil(replicas[via]!.client, sessionId, isStatus("running")));
    expect(events.some((event) => event.type === "status" && event.status.kind === "failed")).toBe(false);
    expect(replicas[via]!.logs()).toContain("the maker of a claimed warm pool pod did not take its answer");
    expect((await sessionPods(sessionId)).map((pod) => pod.metadata?.name)).toEqual([`telo-run-${sessionId}`]);
    await echoes(replicas[via]!, sessionId, "cold-after-maker-killed");
    // The next duties holder replaces the dead maker's pods with its own, and serves from them.
    const successor = await fullPoolOf(maker);
    expect((await poolPods()).some((pod) => pooled.has(pod.metadata?.name))).toBe(false);
    const next = [...up].find((name) => name !== successor) ?? successor;
    const { sessionId: warmId } = await replicas[next]!.client.createSession(kubeSessionBody());
    await eventsUntil(replicas[next]!.client, warmId, isStatus("running"));
    expect((await sessionPods(warmId))[0]?.metadata?.name).toMatch(/^telo-pool-/);
    await echoes(replicas[next]!, warmId, "warm-after-maker-killed");
    await Promise.all([replicas[via]!.client.deleteSession(sessionId), replicas[next]!.client.deleteSession(warmId)]);
  });

  it("hands the duties over on a graceful SIGTERM of the maker: the survivor keeps the pool and serves from it", async () => {
    const maker = await fullPoolOf();
    await replicas[maker]!.stopSupervisor("SIGTERM");
    await replicas[maker]!.stopApi();
    up.delete(maker);
    const successor = await fullPoolOf(maker);
    const pooled = new Set((await poolPods()).map((pod) => pod.metadata?.name));
    const { sessionId } = await replicas[successor]!.client.createSession(kubeSessionBody());
    await eventsUntil(replicas[successor]!.client, sessionId, isStatus("running"));
    const [pod] = await sessionPods(sessionId);
    expect(pooled.has(pod?.metadata?.name)).toBe(true);
    await echoes(replicas[successor]!, sessionId, "after-handover");
    await replicas[successor]!.client.deleteSession(sessionId);
  });
});
