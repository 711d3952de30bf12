/**
 * The replica-kill chaos run of `npm run test:soak` (docs/replicas.md "Output across a handover"):
 * three replicas on one simulated cluster (3 s lease), sessions created through random replicas
 * while a random replica's supervisor is SIGKILLed and started again, round after round, on a
 * fresh seed each time (printed in the test's name; REPLICA_CHAOS_SEED=<seed> replays the
 * choices, not the timing of the processes). At the end every session has an owner (answered
 * `running` through every replica), none is lost (its pod is the one it started with), and every
 * shard is held by a live replica.
 */
import { CoordinationV1Api } from "@kubernetes/client-node";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { LABEL } from "../../src/kube/specs/names.ts";
import { type ClusterRunner, SESSION_NAMESPACE, kubeSessionBody, startClusterRunner } from "../support/kube-runner.ts";
import { freePort } from "../support/ports.ts";
import { eventsUntil, isStatus } from "../support/streams.ts";
import { waitFor } from "../support/wait.ts";
import { random } from "./chaos-plan.ts";

const SHARDS = 8;
const ROUNDS = Number(process.env.REPLICA_CHAOS_ROUNDS ?? 8);
const PER_ROUND = 3;
const seed = Number(process.env.REPLICA_CHAOS_SEED ?? Math.floor(Math.random() * 2 ** 31));

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe("replica-kill chaos run", () => {
  const replicas: ClusterRunner[] = [];
  let leases: CoordinationV1Api;

  beforeAll(async () => {
    for (const identity of ["chaos-a", "chaos-b", "chaos-c"]) {
      const env = { RUNNER_REPLICA_ID: identity, RUNNER_PEER_LISTEN: `127.0.0.1:${await freePort()}`, RUNNER_SHARDS: String(SHARDS), RUNNER_LEASE_DURATION_SECONDS: "3" };
      replicas.push(await startClusterRunner({ env, ...(replicas[0] && { beside: replicas[0] }) }));
    }
    leases = replicas[0]!.kubeConfig.makeApiClient(CoordinationV1Api);
  });
  afterAll(async () => {
    for (const replica of [...replicas].reverse()) await replica.close();
  });

  const pods = async () => {
    const list = await replicas[0]!.core.listNamespacedPod({ namespace: SESSION_NAMESPACE, labelSelector: `${LABEL.managedBy}=telo-k8s-runner` });
    return new Map(list.items.filter((pod) => !pod.metadata?.deletionTimestamp).map((pod) => [pod.metadata?.labels?.[LABEL.sessionId] ?? "", pod.metadata?.uid ?? ""]));
  };

  it(`leaves every session with an owner and none lost (seed ${seed}; replay with REPLICA_CHAOS_SEED=${seed})`, async () => {
    const rand = random(seed);
    const pick = <T>(items: readonly T[]) => items[Math.floor(rand() * items.length)]!;
    const down = new Set<number>();
    const sessions: string[] = [];
    /** Through a random live replica, retrying while it answers 503 (starting, or its supervisor just killed). */
    const create = () =>
      waitFor("a session admitted", async () => {
        const via = replicas[pick([0, 1, 2].filter((index) => !down.has(index)))]!;
        const { sessionId } = await via.client.createSession(kubeSessionBody({ "tick-ms": 500 }));
        await eventsUntil(via.client, sessionId, isStatus("running"));
        return sessionId;
      }, 60_000);

    for (let round = 0; round < ROUNDS; round += 1) {
      const victim = pick([0, 1, 2]);
      down.add(victim);
      await replicas[victim]!.stopSupervisor("SIGKILL");
      await sleep(rand() * 2_000);
      for (let i = 0; i < PER_ROUND; i += 1) sessions.push(await create());
      await replicas[victim]!.startSupervisor();
      down.delete(victim);
      await sleep(1_000 + rand() * 3_000);
    }
    const started = await pods();
    expect([...started.keys()].sort()).toEqual([...sessions].sort());

    // Every session served again, through every replica: it has an owner that adopted it.
    for (const sessionId of sessions) {
      for (const via of replicas) {
        await waitFor(`session ${sessionId} running through a replica`, async () => {
          const response = await fetch(`${via.baseUrl}/v1/sessions/${sessionId}`);
          if (response.status === 503) return undefined;
          expect(response.status).toBe(200);
          return ((await response.json()) as { status: { kind: string } }).status.kind === "running" || undefined;
        }, 30_000);
      }
    }
    // None lost: the same pods (no app restarted), and every shard held by one of the replicas.
    expect(await pods()).toEqual(started);
    const list = await leases.listNamespacedLease({ namespace: SESSION_NAMESPACE, labelSelector: "telo.run/lease-role=shard" });
    const holders = list.items.map((lease) => lease.spec?.holderIdentity);
    expect(holders).toHaveLength(SHARDS);
    for (const holder of holders) expect(["chaos-a", "chaos-b", "chaos-c"]).toContain(holder);
    console.info(`replica chaos: ${ROUNDS} kills, ${sessions.length} sessions, all owned (seed ${seed})`);
  }, 900_000);
});
