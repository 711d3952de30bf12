/**
 * A replica frozen past its lease under live terminals (docs/replicas.md "Fencing the data
 * plane"): three replicas on the simulated cluster with a 3 s lease, sessions printing a numbered
 * line every 200 ms, a terminal client of every session through every replica's api, typing and
 * reconnecting with its last seq as a browser tab does. One replica's api and supervisor are
 * frozen (SIGSTOP for the lease + 10 s, then SIGCONT: a long GC pause, a paused VM), or held to 1 %
 * of a core for as long (a throttled container). Afterwards:
 *
 * - no client was shown a line twice, and a line it missed came behind a `gap`;
 * - the frozen replica wrote no input into a pod once another replica had taken the pod's shard
 *   over: whenever its input reached a pod, the last accepted write of the shard's Lease (the
 *   apiserver's audit) was its own;
 * - no line typed was delivered twice, and a line never delivered was typed on a connection that
 *   was closed after it (never lost on a socket that stayed open);
 * - every session runs on the pod it started with, served through every replica.
 *
 * Each disturbance twice: with terminals spliced through the api, and handed by the owner's api to
 * its supervisor (docs/relay.md "The handoff"), where the frozen supervisor holds the client's
 * socket itself.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { LABEL } from "../../src/kube/specs/names.ts";
import { shardOf } from "../../src/contract/ids.ts";
import type { KubeRunner } from "../support/kube-runner.ts";
import { SESSION_NAMESPACE, echoes, runningSession } from "../support/kube-runner.ts";
import { type LiveTerminal, liveTerminal, ticksSeen } from "../support/live-terminal.ts";
import { starve } from "../support/cpu-starve.ts";
import { type ReplicaSet, startReplicaSet } from "../support/replica-set.ts";
import { scrape, valueOf } from "../support/metrics.ts";
import { waitFor } from "../support/wait.ts";
import { auditedWrites } from "../support/write-audit.ts";

const SHARDS = 6;
const LEASE_SECONDS = 3;
const FROZEN_MS = LEASE_SECONDS * 1000 + 10_000;
const START_MS = 30_000;
/** After the thaw: the replica finds its hold lapsed, clients reconnect, shards settle. */
const SETTLE_MS = 8_000;

const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const userAgentOf = (identity: string) => `(replica ${identity})`;

type Disturbance = { name: string; freeze(replica: KubeRunner): Promise<() => Promise<void>> };

const disturbances: Disturbance[] = [
  {
    name: "frozen by SIGSTOP past its lease, then resumed",
    async freeze(replica) {
      replica.signalApi("SIGSTOP");
      replica.signalSupervisor("SIGSTOP");
      return async () => {
        replica.signalSupervisor("SIGCONT");
        replica.signalApi("SIGCONT");
      };
    },
  },
  {
    name: "held to 1 % of a core past its lease, then let go",
    async freeze(replica) {
      const starved = await starve(replica.pids(), 0.01, "freeze");
      return () => starved.release();
    },
  },
];

const cases = disturbances.flatMap((disturbance) => [
  { ...disturbance, terminals: "spliced", handoff: false },
  { ...disturbance, terminals: "handed over", handoff: true },
]);

describe.each(cases)("a replica $name, under live terminals ($terminals) and input on every replica", ({ freeze, handoff }) => {
  let set: ReplicaSet;
  const names = ["a", "b", "c"];
  beforeAll(async () => {
    set = await startReplicaSet(names, { shards: SHARDS, leaseSeconds: LEASE_SECONDS, startMs: START_MS, handoff });
  }, 3 * START_MS);
  afterAll(async () => {
    const a = set?.replicas.a;
    a?.signalSupervisor("SIGCONT");
    a?.signalApi("SIGCONT");
    await set?.close();
  });

  it("shows no line twice, loses none without a gap, writes no input after its hold lapsed, and every session lives on", async () => {
    const replicas = names.map((name) => set.replicas[name] as KubeRunner);
    const frozen = replicas[0]!;
    const sim = frozen.sim;
    // Two sessions admitted through each replica (so owned by each), printing a line every 200 ms.
    const sessions: string[] = [];
    for (const replica of replicas) for (let n = 0; n < 2; n++) sessions.push(await runningSession(replica, { "tick-ms": 200 }));
    const podUids = new Map<string, string | undefined>();
    for (const sessionId of sessions) {
      const pods = await frozen.core.listNamespacedPod({ namespace: SESSION_NAMESPACE, labelSelector: `${LABEL.sessionId}=${sessionId}` });
      podUids.set(sessionId, pods.items[0]?.metadata?.uid);
    }
    const clients: { sessionId: string; via: string; terminal: LiveTerminal }[] = [];
    for (const sessionId of sessions) {
      for (const [index, replica] of replicas.entries()) {
        const via = names[index]!;
        clients.push({ sessionId, via, terminal: liveTerminal(replica.client, sessionId, `in-${sessionId}-${via}`, 700) });
      }
    }
    await pause(2_000);

    const thaw = await freeze(frozen);
    await pause(FROZEN_MS);
    const resumedAt = Date.now();
    await thaw();
    await pause(SETTLE_MS);
    for (const client of clients) await client.terminal.stop();

    // Shown to each client: every line once and in order; a line missed only behind a gap.
    for (const { sessionId, via, terminal } of clients) {
      const seen = ticksSeen(terminal.connections);
      const what = `session ${sessionId} through ${via}`;
      expect(seen.length, `${what}: lines shown`).toBeGreaterThan(10);
      for (let index = 1; index < seen.length; index++) {
        const [before, after] = [seen[index - 1]!, seen[index]!];
        expect(after.tick, `${what}: line ${after.tick} after ${before.tick}`).toBeGreaterThan(before.tick);
        if (after.tick > before.tick + 1) expect(after.afterGap, `${what}: lines ${before.tick + 1}–${after.tick - 1} missed without a gap`).toBe(true);
      }
    }

    // No input written by the frozen replica into a pod whose shard another replica held then.
    const leaseWrites = (await auditedWrites(frozen, SESSION_NAMESPACE)).filter((write) => write.resource === "leases" && write.code >= 200 && write.code < 300);
    const heldByAnotherAt = (pod: string, at: number) => {
      const lease = `telo-runner-default-shard-${shardOf(pod.replace(/^telo-run-/, ""), SHARDS)}`;
      const last = leaseWrites.filter((write) => write.name === lease && write.at <= at).at(-1);
      return last !== undefined && !last.userAgent.includes(userAgentOf("replica-a"));
    };
    const stdin = sim.stdinWrites();
    const stale = stdin.filter((write) => write.userAgent.includes(userAgentOf("replica-a")) && heldByAnotherAt(write.pod, write.at));
    expect(stale, "input the frozen replica wrote into pods another replica held").toEqual([]);
    // The disturbance did what it is for: another replica took a shard of the disturbed one over.
    const disturbedShards = new Set(sessions.slice(0, 2).map((sessionId) => `telo-runner-default-shard-${shardOf(sessionId, SHARDS)}`));
    const takenOver = leaseWrites.some((write) => write.at > resumedAt - FROZEN_MS && write.at < resumedAt && disturbedShards.has(write.name) && !write.userAgent.includes(userAgentOf("replica-a")));
    expect(takenOver, "a shard of the disturbed replica taken over meanwhile").toBe(true);

    // Every line typed delivered at most once; one never delivered was typed on a connection closed after it.
    const delivered = new Map<string, number>();
    for (const write of stdin) for (const line of write.text.split("\r")) if (line) delivered.set(line, (delivered.get(line) ?? 0) + 1);
    for (const { terminal } of clients) {
      for (const connection of terminal.connections) {
        for (const line of connection.typed) {
          expect(delivered.get(line) ?? 0, `${line} delivered`).toBeLessThanOrEqual(1);
          if (!delivered.has(line)) expect(connection.closed, `${line}, never delivered, on a connection still open`).toBeDefined();
        }
      }
    }

    // Every session runs on its first pod and is served through every replica.
    for (const sessionId of sessions) {
      const pods = await frozen.core.listNamespacedPod({ namespace: SESSION_NAMESPACE, labelSelector: `${LABEL.sessionId}=${sessionId}` });
      expect(pods.items.map((pod) => pod.metadata?.uid)).toEqual([podUids.get(sessionId)]);
      for (const replica of replicas) {
        await waitFor(`session ${sessionId} running through every replica`, async () => (await replica.client.getSession(sessionId).catch(() => undefined))?.status.kind === "running" || undefined, 20_000);
      }
      await echoes(replicas[1]!, sessionId, `after-${sessionId}`);
    }

    // The variant is what it says: the owners' own terminals went to their supervisors by handoff, or none did.
    let handed = 0;
    for (const replica of replicas) handed += valueOf(await scrape(replica.baseUrl), "runner_terminals_opened_total", { path: "handed" });
    if (handoff) expect(handed).toBeGreaterThan(0);
    else expect(handed).toBe(0);
  }, 3 * 60_000);
});
