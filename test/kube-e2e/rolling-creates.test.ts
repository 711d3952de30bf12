/**
 * Sessions created without a pause through a rolling replacement of three replicas (docs/replicas.md
 * "What a user sees", the Create row): a new replica joins, then an old one leaves with SIGTERM, three
 * times over, while a client creates a session every 150 ms through whichever replicas are up.
 * Every `201` reaches `running`: the replica that admits a session owns it, and a shard that moves
 * away right after (a joining replica won it) is handed over only once the start it admitted has
 * its pod, so the new owner takes it over instead of the session being lost.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { RunnerError } from "../../src/contract/problem.ts";
import { type ClusterRunner, ON_REAL_CLUSTER, kubeSessionBody } from "../support/kube-runner.ts";
import { type ReplicaSet, startReplicaSet } from "../support/replica-set.ts";
import { waitFor } from "../support/wait.ts";

const SHARDS = 8;
const LEASE_SECONDS = 3;
const START_MS = ON_REAL_CLUSTER ? 90_000 : 30_000;
const CREATE_EVERY_MS = 150;

describe(`sessions created through a rolling replacement of three replicas on a ${ON_REAL_CLUSTER ? "real" : "simulated"} cluster`, () => {
  let set: ReplicaSet;
  beforeAll(async () => {
    set = await startReplicaSet(["a", "b", "c"], { shards: SHARDS, leaseSeconds: LEASE_SECONDS, startMs: START_MS });
  }, 3 * START_MS);
  afterAll(() => set?.close());

  it("brings every session answered 201 to running", async () => {
    const up = new Set(["a", "b", "c"]);
    const created: { sessionId: string; via: string }[] = [];
    const refused: string[] = [];
    let creating = true;
    const creator = (async () => {
      for (let n = 0; creating; n++) {
        const live = [...up];
        const via = live[n % live.length]!;
        try {
          const { sessionId } = await (set.replicas[via] as ClusterRunner).client.createSession(kubeSessionBody());
          created.push({ sessionId, via });
        } catch (error) {
          // Refused (a replica starting or leaving: 503), or the connection cut as it leaves: no 201, nothing promised.
          refused.push(error instanceof RunnerError ? String(error.status) : "unreachable");
        }
        await new Promise((resolve) => setTimeout(resolve, CREATE_EVERY_MS));
      }
    })();

    for (const [old, fresh] of [["a", "d"], ["b", "e"], ["c", "f"]] as const) {
      await set.join(fresh);
      up.add(fresh);
      up.delete(old);
      await set.leave(old);
    }
    creating = false;
    await creator;

    expect(created.length).toBeGreaterThan(20);
    const survivor = set.replicas.f as ClusterRunner;
    for (const { sessionId, via } of created) {
      await waitFor(`session ${sessionId} (admitted by ${via}) running`, async () => {
        const document = await survivor.client.getSession(sessionId).catch(() => undefined);
        if (document?.status.kind === "failed") throw new Error(`session ${sessionId}, admitted by ${via}, failed: ${JSON.stringify(document.status)}`);
        return document?.status.kind === "running" || undefined;
      }, START_MS);
    }
  }, 5 * 60_000);
});
