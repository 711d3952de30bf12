/**
 * k8s/base's three replicas in the real cluster (an overlay changing image references and the
 * session ceilings only, so that six sessions fit the node beside four runner pods), with live
 * terminals typed into through the Service the whole time: a rolling update
 * (`kubectl rollout restart`), then one replica's two containers SIGKILLed. Counted from the
 * session pods' own output (their container logs): no session lost, no app restarted, no output
 * line reaching a client more often than the pod printed it, a line missing only where the client
 * was told of a gap, seqs increasing across owners, no event id twice, and every shard Lease held
 * by a live replica afterwards. Each run prints what a user waited through; docs/replicas.md
 * quotes it.
 */
import { execFile } from "node:child_process";
import { setTimeout as sleep } from "node:timers/promises";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { summarize } from "../../../bench/support/stats.ts";
import { RunnerClient, type StreamItem } from "../../../src/client/index.ts";
import { kubeSessionBody, SESSION_NAMESPACE } from "../../support/kube-runner.ts";
import { eventsUntil, isStatus } from "../../support/streams.ts";
import { retryingOn503 } from "../../support/retry.ts";
import { waitFor } from "../../support/wait.ts";
import { RUNNER_NAMESPACE } from "../fixture/cluster.ts";
import { kubectl } from "../pods.ts";
import { applyOverlay, importRunnerImage, readyRunners, runnerPods, serviceUrl, uninstall, type RunnerPod } from "./install.ts";
import { diagnoseFailures } from "./diagnostics.ts";
import { enforceNetworkPolicy } from "./isolation.ts";
import { LiveTerminal } from "./live-terminal.ts";

const REPLICAS = 3;
const SESSIONS_PER_REPLICA = 2;
/** Typing before and after each disruption, so both sides of it are counted. */
const TYPING_MS = 3_000;
/** The shard Leases of the default identity (src/replicas/membership.ts). */
const SHARD_LEASE = /^telo-runner-default-shard-\d+$/;

type SessionPod = { name: string; uid: string; restarts: number };

async function sessionPod(sessionId: string): Promise<SessionPod> {
  const list = JSON.parse(await kubectl(["-n", SESSION_NAMESPACE, "get", "pods", "-l", `telo.run/session-id=${sessionId}`, "-o", "json"])) as {
    items: Array<{ metadata: { name: string; uid: string }; status: { containerStatuses?: Array<{ restartCount: number }> } }>;
  };
  expect(list.items.length).toBe(1);
  const [pod] = list.items;
  return { name: pod!.metadata.name, uid: pod!.metadata.uid, restarts: (pod!.status.containerStatuses ?? []).reduce((sum, c) => sum + c.restartCount, 0) };
}

/** Every shard Lease names a replica among `pods` as its holder. */
async function shardHolders(): Promise<string[]> {
  const list = JSON.parse(await kubectl(["-n", SESSION_NAMESPACE, "get", "leases", "-o", "json"])) as { items: Array<{ metadata: { name: string }; spec: { holderIdentity?: string } }> };
  return list.items.filter((lease) => SHARD_LEASE.test(lease.metadata.name)).map((lease) => lease.spec.holderIdentity ?? "");
}

/** The session's event stream across everything, reconnecting with Last-Event-ID. */
function follow(client: RunnerClient, sessionId: string): { items: StreamItem[]; stop(): Promise<void> } {
  const items: StreamItem[] = [];
  const abort = new AbortController();
  const done = (async () => {
    for await (const item of client.events(sessionId, { signal: abort.signal, maxReconnectDelayMs: 500 })) items.push(item);
  })().catch(() => undefined);
  return {
    items,
    async stop() {
      abort.abort();
      await done;
    },
  };
}

describe("three replicas installed with kubectl apply -k", () => {
  diagnoseFailures();
  let overlay: string | undefined;
  let ref: string;
  let pods: RunnerPod[];
  let client: RunnerClient;
  const sessions: Array<{ id: string; pod: SessionPod }> = [];

  beforeAll(async () => {
    await enforceNetworkPolicy();
    ref = (await importRunnerImage("replicas")).ref;
    overlay = await applyOverlay("replicas", { replicas: REPLICAS, env: { RUNNER_MAX_CPU: "50m", RUNNER_MAX_MEMORY: "64Mi" } });
    pods = await readyRunners(ref, REPLICAS);
    client = new RunnerClient(await serviceUrl("http"));
  }, 600_000);

  afterAll(async () => {
    for (const session of sessions) await client?.deleteSession(session.id).catch(() => undefined);
    if (overlay) await uninstall({ overlay });
  }, 300_000);

  /**
   * Types into every session's terminal through the Service while `disrupt` runs, then holds
   * what each client got against what its pod printed. Returns what users waited through.
   */
  async function underLiveTerminals(disrupt: () => Promise<void>): Promise<{ reconnectMs: number[]; silenceMs: number[]; missing: number; gaps: number; closes: number[] }> {
    const live = sessions.map((session, index) => new LiveTerminal(client, session.id, `s${index}`));
    const streams = sessions.map((session) => follow(client, session.id));
    await sleep(TYPING_MS);
    const from = Date.now();
    await disrupt();
    await sleep(TYPING_MS);
    await Promise.all(live.map((terminal) => terminal.stop()));
    await Promise.all(streams.map((stream) => stream.stop()));

    let missing = 0;
    for (const [index, session] of sessions.entries()) {
      const terminal = live[index]!;
      // The same pod, never restarted: the app lived through it.
      expect(await sessionPod(session.id)).toEqual(session.pod);
      expect((await retryingOn503(`session ${session.id} through the Service`, () => client.getSession(session.id), 30_000)).status.kind).toBe("running");
      const counted = terminal.countAgainst(await kubectl(["-n", SESSION_NAMESPACE, "logs", session.pod.name, "-c", "session"]));
      expect(counted.duplicated, `${session.id}: lines received more often than the pod printed them`).toEqual([]);
      if (counted.missing.length > 0) expect(terminal.gaps(), `${session.id}: lines missing without a gap`).toBeGreaterThan(0);
      missing += counted.missing.length;
      const seqs = terminal.seqs();
      expect(seqs.every((seq, i) => i === 0 || seq > seqs[i - 1]!)).toBe(true);
      const ids = streams[index]!.items.flatMap((item) => ("id" in item ? [item.id] : []));
      expect(ids.every((id, i) => i === 0 || id > ids[i - 1]!)).toBe(true);
      expect(terminal.typed).toBeGreaterThan(0);
    }
    return {
      reconnectMs: live.flatMap((terminal) => terminal.reconnectMs),
      silenceMs: live.map((terminal) => terminal.longestSilenceMs(from)),
      missing,
      gaps: live.reduce((sum, terminal) => sum + terminal.gaps(), 0),
      closes: live.flatMap((terminal) => terminal.closeCodes),
    };
  }

  const report = (what: string, figures: Awaited<ReturnType<typeof underLiveTerminals>>) => {
    const reconnect = summarize(figures.reconnectMs);
    const silence = summarize(figures.silenceMs);
    console.log(
      `[replicas] ${what}: ${sessions.length} live terminals, reconnects ${reconnect.n} (p50 ${reconnect.median} ms, p99 ${reconnect.p99} ms), ` +
        `longest silence p50 ${silence.median} ms, max ${silence.max} ms; ${figures.missing} lines missing, ${figures.gaps} gaps; close codes ${JSON.stringify(figures.closes)}`,
    );
  };

  it("admits sessions on every replica and serves each through every replica", async () => {
    for (const pod of pods) {
      const direct = new RunnerClient(`http://${pod.ip}:8062`);
      for (let i = 0; i < SESSIONS_PER_REPLICA; i++) {
        const { sessionId } = await direct.createSession(kubeSessionBody({ output: "ready\r\n" }));
        await eventsUntil(direct, sessionId, isStatus("running"));
        sessions.push({ id: sessionId, pod: await sessionPod(sessionId) });
      }
    }
    for (const pod of pods) {
      const direct = new RunnerClient(`http://${pod.ip}:8062`);
      for (const session of sessions) expect((await direct.getSession(session.id)).status.kind).toBe("running");
    }
    const names = pods.map((pod) => pod.name);
    expect((await shardHolders()).filter((holder) => !names.includes(holder))).toEqual([]);
  }, 240_000);

  it("rolls the three replicas under live terminals: no session lost, no app restarted, no line twice", async () => {
    const before = pods.map((pod) => pod.name);
    const figures = await underLiveTerminals(async () => {
      await kubectl(["-n", RUNNER_NAMESPACE, "rollout", "restart", "deployment/telo-k8s-runner"]);
      await kubectl(["-n", RUNNER_NAMESPACE, "rollout", "status", "deployment/telo-k8s-runner", "--timeout=360s"]);
      pods = await readyRunners(ref, REPLICAS);
    });
    expect(pods.filter((pod) => before.includes(pod.name))).toEqual([]);
    const names = pods.map((pod) => pod.name);
    await waitFor("every shard held by a current replica", async () => (await shardHolders()).every((holder) => names.includes(holder)) || undefined, 60_000);
    report("rolling update", figures);
  }, 600_000);

  it("takes a SIGKILLed replica's sessions over under live terminals: none lost, no app restarted, no line twice", async () => {
    const [victim] = pods;
    const figures = await underLiveTerminals(async () => {
      const status = JSON.parse(await kubectl(["-n", RUNNER_NAMESPACE, "get", "pod", victim!.name, "-o", "json"])) as {
        status: { containerStatuses: Array<{ name: string; containerID: string }> };
      };
      // Both containers at once, as a node losing the process would: nothing is handed over.
      await Promise.all(
        status.status.containerStatuses.map((container) =>
          promisify(execFile)("ctr", [`--address=${inject("realCluster").containerdSocket}`, "--namespace=k8s.io", "tasks", "kill", "--signal", "SIGKILL", container.containerID.replace(/^containerd:\/\//, "")]),
        ),
      );
      pods = await waitFor("the killed replica's containers to be restarted and Ready", async () => {
        const current = await runnerPods();
        const again = current.find((pod) => pod.name === victim!.name);
        const restarted = again !== undefined && again.restarts.api! > victim!.restarts.api! && again.restarts.supervisor! > victim!.restarts.supervisor!;
        return restarted && current.length === REPLICAS && current.every((pod) => pod.ready) ? current : undefined;
      }, 180_000);
    });
    const names = pods.map((pod) => pod.name);
    await waitFor("every shard held by a live replica", async () => (await shardHolders()).every((holder) => names.includes(holder)) || undefined, 60_000);
    report("one replica SIGKILLed", figures);
  }, 600_000);
});
