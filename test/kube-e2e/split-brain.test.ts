/**
 * A split brain through real processes (docs/replicas.md "Fencing on the pod"): two replicas
 * against one cluster with a 3 s lease; the supervisor of the owner of two sessions is paused
 * (SIGSTOP) past its lease, the other replica takes the sessions over and serves one of them,
 * then the paused one resumes (SIGCONT) with a client's DELETE of the other session racing to
 * it. The apiserver's audit (the simulator's write record, or the real apiserver's audit log) is
 * counted per pod and per replica: the resumed replica has no write to those pods accepted, the
 * successor's are its adoption stamps and the DELETE, and the session it serves stays healthy.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { TERM_ANNOTATION, TERM_HOLDER_ANNOTATION } from "../../src/kube/cluster/fencing.ts";
import { LABEL } from "../../src/kube/specs/names.ts";
import { shardOf } from "../../src/contract/ids.ts";
import { type ClusterRunner, ON_REAL_CLUSTER, SESSION_NAMESPACE, echoes, runningSession } from "../support/kube-runner.ts";
import { type ReplicaSet, startReplicaSet } from "../support/replica-set.ts";
import { waitFor } from "../support/wait.ts";
import { accepted, auditedWrites, byReplica } from "../support/write-audit.ts";

const SHARDS = 4;
const LEASE_SECONDS = 3;
const START_MS = ON_REAL_CLUSTER ? 90_000 : 20_000;

describe(`a replica paused past its lease on a ${ON_REAL_CLUSTER ? "real" : "simulated"} cluster`, () => {
  let set: ReplicaSet;
  let a: ClusterRunner;
  let b: ClusterRunner;

  beforeAll(async () => {
    set = await startReplicaSet(["a", "b"], { shards: SHARDS, leaseSeconds: LEASE_SECONDS, startMs: START_MS });
    ({ a, b } = set.replicas as { a: ClusterRunner; b: ClusterRunner });
  }, 3 * START_MS);
  afterAll(async () => {
    a?.signalSupervisor("SIGCONT");
    await set?.close();
  });

  const shardLeases = () => set.shardLeases();
  const podOf = async (sessionId: string) => {
    const pods = await a.core.listNamespacedPod({ namespace: SESSION_NAMESPACE, labelSelector: `${LABEL.sessionId}=${sessionId}` });
    return pods.items.filter((pod) => !pod.metadata?.deletionTimestamp);
  };
  /**
   * A request through `via`, retried while the session is between replicas (503), each attempt
   * given up after 2 s as a client would: an api still forwarding by a placement a period old
   * sends it to the paused replica, where it waits until the peer link gives up on it.
   */
  const settled = (via: ClusterRunner, sessionId: string, method: "GET" | "DELETE") =>
    waitFor(`${method} of session ${sessionId} answered by its owner`, async () => {
      const response = await fetch(`${via.baseUrl}/v1/sessions/${sessionId}`, { method, signal: AbortSignal.timeout(2_000) }).catch(() => undefined);
      if (!response || response.status === 503) return undefined;
      return response;
    }, START_MS);

  it("has no write of the resumed replica accepted on the pods its successor took over, and the session stays healthy there", async () => {
    const kept = await runningSession(a);
    const raced = await runningSession(a);
    const [keptPod] = await podOf(kept);
    const [racedPod] = await podOf(raced);
    const names = [keptPod?.metadata?.name, racedPod?.metadata?.name];
    expect((await shardLeases())[shardOf(kept, SHARDS)]?.holder).toBe("replica-a");

    const pausedAt = Date.now();
    a.signalSupervisor("SIGSTOP");
    // The successor serves the session once it took the shard over.
    expect(((await (await settled(b, kept, "GET")).json()) as { status: { kind: string } }).status.kind).toBe("running");
    const taken = (await shardLeases())[shardOf(kept, SHARDS)];
    expect(taken?.holder).toBe("replica-b");
    await echoes(b, kept, "under-the-successor");
    // It stamped its term on the pods before it acted on them.
    for (const sessionId of [kept, raced]) {
      const [pod] = await podOf(sessionId);
      expect(pod?.metadata?.annotations?.[TERM_HOLDER_ANNOTATION]).toBe("replica-b");
      expect(Number(pod?.metadata?.annotations?.[TERM_ANNOTATION])).toBe((await shardLeases())[shardOf(sessionId, SHARDS)]?.term);
    }

    const resumedAt = Date.now();
    a.signalSupervisor("SIGCONT");
    // The resumed replica's api still forwards by what its supervisor said before the pause: the
    // DELETE may reach the stale owner first, which must refuse it (503) rather than act.
    const racing = await fetch(`${a.baseUrl}/v1/sessions/${raced}`, { method: "DELETE" });
    expect([204, 503]).toContain(racing.status);
    expect((await settled(b, raced, "DELETE")).status).toBe(204);
    await waitFor("the raced session's pod deleted", async () => (await podOf(raced)).length === 0 || undefined, START_MS);
    // Two of the resumed replica's coordination periods after the pause: whatever it would do on
    // its own after resuming, it has done.
    await waitFor("the resumed replica renewing its member Lease again", async () => {
      const renews = byReplica(await auditedWrites(a, SESSION_NAMESPACE), "replica-a").filter((w) => w.resource === "leases" && w.at >= resumedAt && accepted(w));
      return renews.filter((w) => w.name === "telo-runner-default-member-replica-a").length >= 2 || undefined;
    }, START_MS);

    const all = await auditedWrites(a, SESSION_NAMESPACE);
    const writes = all.filter((w) => w.resource === "pods" && w.at >= pausedAt && accepted(w));
    // Resumed, replica-a is a live member again and may win its shards back by a fresh
    // acquisition (a new term): from then on its writes are an owner's. Before that, none.
    const reacquiredAt = (sessionId: string) =>
      byReplica(all, "replica-a").find((w) => w.name === `telo-runner-default-shard-${shardOf(sessionId, SHARDS)}` && w.at >= resumedAt && accepted(w))?.at ?? Infinity;
    const acceptedOf = (identity: string, name: string | undefined) => byReplica(writes, identity).filter((w) => w.name === name);
    for (const [index, sessionId] of [kept, raced].entries()) {
      const fromA = acceptedOf("replica-a", names[index]);
      expect(fromA.filter((w) => w.at < reacquiredAt(sessionId))).toEqual([]);
      // Each owner stamped the pod before it acted on it: the successor, and replica-a if it took the shard back.
      expect(acceptedOf("replica-b", names[index])[0]?.verb).toBe("update");
      if (fromA.length > 0) expect(fromA[0]?.verb).toBe("update");
    }
    expect(writes.filter((w) => w.name === names[1] && w.verb === "delete")).toHaveLength(1);

    // The kept session is healthy under its owner, through either api, on the same pod, which
    // carries the term its owner holds the shard under.
    for (const via of [a, b]) expect(((await (await settled(via, kept, "GET")).json()) as { status: { kind: string } }).status.kind).toBe("running");
    await echoes(a, kept, "after-the-resume");
    await echoes(b, kept, "through-either");
    const [pod] = await podOf(kept);
    expect(pod?.metadata?.uid).toBe(keptPod?.metadata?.uid);
    const owner = (await shardLeases())[shardOf(kept, SHARDS)];
    expect({ holder: pod?.metadata?.annotations?.[TERM_HOLDER_ANNOTATION], term: Number(pod?.metadata?.annotations?.[TERM_ANNOTATION]) }).toEqual(owner);
  });
});
