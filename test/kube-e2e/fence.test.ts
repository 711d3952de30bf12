/**
 * The pod fence itself, on the simulated cluster (docs/replicas.md "Fencing on the pod"): a
 * replica's DELETE of a session is held by the apiserver (an injected latency) while a
 * successor's stamp, a newer term, lands on the pod: the apiserver refuses the delete on the
 * version the replica checked (409), the replica reads the pod again, finds the newer term, and
 * lets the session go rather than retry; the client is told the session is moving. One
 * replica (no RUNNER_REPLICA_ID) has no fence: the same race deletes the pod, as always.
 */
import { CoordinationV1Api } from "@kubernetes/client-node";
import { afterEach, describe, expect, it } from "vitest";
import { LABEL } from "../../src/kube/specs/names.ts";
import { TERM_ANNOTATION, TERM_HOLDER_ANNOTATION } from "../../src/kube/cluster/fencing.ts";
import { shardOf } from "../../src/contract/ids.ts";
import { type KubeRunner, SESSION_NAMESPACE, kubeSessionBody, startKubeRunner } from "../support/kube-runner.ts";
import { freePort } from "../support/ports.ts";
import { eventsUntil, isStatus } from "../support/streams.ts";
import { waitFor } from "../support/wait.ts";
import { auditedWrites, byReplica } from "../support/write-audit.ts";

const SHARDS = 4;
const HELD_MS = 1_500;

async function replicaEnv(identity: string): Promise<Record<string, string>> {
  return {
    RUNNER_REPLICA_ID: identity,
    RUNNER_PEER_LISTEN: `127.0.0.1:${await freePort()}`,
    RUNNER_SHARDS: String(SHARDS),
    RUNNER_LEASE_DURATION_SECONDS: "3",
  };
}

describe("the fence on a session pod's delete", () => {
  let runner: KubeRunner | undefined;
  afterEach(async () => {
    await runner?.close();
    runner = undefined;
  });

  const podOf = async (sessionId: string) => {
    const pods = await runner!.core.listNamespacedPod({ namespace: SESSION_NAMESPACE, labelSelector: `${LABEL.sessionId}=${sessionId}` });
    return pods.items[0];
  };
  const running = async () => {
    const created = await waitFor("a session admitted (the replica holds its shards)", async () => {
      const response = await fetch(`${runner!.baseUrl}/v1/sessions`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(kubeSessionBody()) });
      return response.status === 201 ? ((await response.json()) as { sessionId: string }) : undefined;
    });
    await eventsUntil(runner!.client, created.sessionId, isStatus("running"));
    return created.sessionId;
  };
  /**
   * The session's DELETE, held by the apiserver until another writer (the test, as a successor
   * would) has stamped `stamp` on the pod; resolves with the DELETE's answer.
   */
  const deleteWhileStamped = async (sessionId: string, stamp: { holder: string; term: number }) => {
    const sim = runner!.sim;
    const name = (await podOf(sessionId))?.metadata?.name ?? "";
    sim.resetCounters();
    sim.faults.addLatency({ verb: "delete", resource: "pods", namespace: SESSION_NAMESPACE, ms: HELD_MS });
    const deletion = fetch(`${runner!.baseUrl}/v1/sessions/${sessionId}`, { method: "DELETE" });
    await waitFor("the replica's pod delete held by the apiserver", async () => (sim.counters().requests["delete pods"] ?? 0) >= 1 || undefined);
    const pod = await runner!.core.readNamespacedPod({ namespace: SESSION_NAMESPACE, name });
    const annotations = { ...pod.metadata?.annotations, [TERM_ANNOTATION]: String(stamp.term), [TERM_HOLDER_ANNOTATION]: stamp.holder };
    await runner!.core.replaceNamespacedPod({ namespace: SESSION_NAMESPACE, name, body: { ...pod, metadata: { ...pod.metadata, annotations } } });
    const answer = await deletion;
    sim.faults.clear();
    return { name, answer };
  };

  it("is refused by the apiserver once a successor stamped a newer term, and the replica lets the session go", async () => {
    runner = await startKubeRunner({ env: await replicaEnv("replica-a") });
    const sessionId = await running();
    const uid = (await podOf(sessionId))?.metadata?.uid;
    const leases = runner.kubeConfig.makeApiClient(CoordinationV1Api);
    const lease = await leases.readNamespacedLease({ namespace: SESSION_NAMESPACE, name: `telo-runner-default-shard-${shardOf(sessionId, SHARDS)}` });
    const successor = { holder: "replica-z", term: (lease.spec?.leaseTransitions ?? 0) + 1 };

    const { name, answer } = await deleteWhileStamped(sessionId, successor);
    expect(answer.status).toBe(503);
    expect(((await answer.json()) as { error: string }).error).toBe("session_moving");
    // The one delete the replica sent was refused on the version it had checked; having read the
    // newer term, it sent no other.
    const writes = byReplica(await auditedWrites(runner, SESSION_NAMESPACE), "replica-a").filter((w) => w.resource === "pods" && w.name === name);
    expect(writes.map((w) => `${w.verb} ${w.code}`)).toEqual(["delete 409"]);
    expect(runner.logs()).toContain("a fenced pod write was refused");

    // The pod lives on, the successor's; this replica no longer serves the session, and its
    // later attempts to adopt it again (its shard Lease is still its own) are refused by the
    // pod's newer term before any write.
    const pod = await podOf(sessionId);
    expect(pod?.metadata?.uid).toBe(uid);
    expect(pod?.metadata?.annotations?.[TERM_HOLDER_ANNOTATION]).toBe("replica-z");
    const refusals = () => runner!.logs().split("a fenced pod write was refused").length - 1;
    await waitFor("an adoption of the session again, refused on the pod's term", async () => refusals() >= 2 || undefined);
    const answerNow = await fetch(`${runner.baseUrl}/v1/sessions/${sessionId}`);
    expect(answerNow.status).toBe(503);
    expect(((await answerNow.json()) as { error: string }).error).toBe("session_moving");
    const later = byReplica(await auditedWrites(runner, SESSION_NAMESPACE), "replica-a").filter((w) => w.resource === "pods" && w.name === name);
    expect(later.map((w) => `${w.verb} ${w.code}`)).toEqual(["delete 409"]);
    await runner.core.deleteNamespacedPod({ namespace: SESSION_NAMESPACE, name, gracePeriodSeconds: 0 });
  });

  it("lets one replica win the same race: its delete, refused on the stale version, reads the pod again and deletes it; no term is stamped", async () => {
    runner = await startKubeRunner();
    const sessionId = await running();
    expect((await podOf(sessionId))?.metadata?.annotations?.[TERM_ANNOTATION]).toBeUndefined();
    const { name, answer } = await deleteWhileStamped(sessionId, { holder: "replica-z", term: 7 });
    expect(answer.status).toBe(204);
    await waitFor("the pod deleted", async () => (await podOf(sessionId)) === undefined || undefined);
    const writes = (await auditedWrites(runner, SESSION_NAMESPACE)).filter((w) => w.resource === "pods" && w.name === name && w.verb === "delete");
    // The same conditional delete as among replicas; the only replica's writer is refused by no stamp.
    expect(writes.map((w) => w.code)).toEqual([409, 200]);
  });
});
