/**
 * The chaos run (docs/testing.md "The chaos and load runs"), seeded and replayable: sessions are started and stopped while the
 * simulated cluster's fault knobs fire at random (API errors, latency on every verb including
 * attach, dropped watches, 410s, cut attach streams, pods deleted behind the runner's back), the
 * supervisor is SIGKILLed and the api restarted. Afterwards every session has a terminal status
 * consistent with what its pod did, no session object is left that no session explains, and the
 * processes' fd counts and RSS are back near their baseline. Only states and counts are checked:
 * a slow machine only takes longer. `chaos.test.ts` (npm test) and `chaos.soak.ts` (npm run
 * test:soak) run it at two sizes.
 */
import type { ChildProcess } from "node:child_process";
import { readdirSync, readFileSync } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { CoreV1Api } from "@kubernetes/client-node";
import { expect } from "vitest";
import { RunnerClient } from "../../src/client/index.ts";
import { startLocalCluster } from "../../src/local-cluster/index.ts";
import { SESSION_NAMESPACE } from "../support/kube-runner.ts";
import { sessionBody } from "../support/session-body.ts";
import { freePort } from "../support/ports.ts";
import { capturedStderr, spawnTs, stopChild } from "../support/processes.ts";
import { GiveUp, waitFor } from "../support/wait.ts";
import { type Fault, type PlanSize, chaosPlan, random } from "./chaos-plan.ts";

export type ChaosRun = PlanSize & { seed: number };

/** Sessions started at once; each wave's faults fire after its creations. */
const CONCURRENCY = 8;
const TERMINAL = new Set(["stopped", "exited", "failed"]);

/** The seed to replay from the environment (CHAOS_SEED), else a fresh one. */
export function seedFromEnv(): number {
  return Number(process.env.CHAOS_SEED ?? Math.floor(Math.random() * 2 ** 31));
}

function procStatus(pid: number): { fds: number; rssKb: number } {
  const rss = /VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, "utf8"))?.[1];
  return { fds: readdirSync(`/proc/${pid}/fd`).length, rssKb: Number(rss) };
}

/** One whole chaos run: its own simulated cluster and processes, torn down however it ends. */
export async function runChaos(run: ChaosRun): Promise<void> {
  const dir = await mkdtemp(join(tmpdir(), "k8s-runner-chaos-"));
  const [port, bundlePort] = [await freePort(), await freePort()];
  const local = await startLocalCluster(
    { PORT: String(port), RUNNER_BUNDLE_PORT: String(bundlePort), RUNNER_INTERNAL_SOCKET: join(dir, "supervisor.sock"), RUNNER_MAX_SESSIONS: String(run.sessions + 50), RUNNER_START_DEADLINE_SECONDS: "20" },
    { podStartDelayMs: 20, backoffMs: 200 },
  );
  const sim = local.cluster;
  const env = local.env;
  const core = sim.kubeConfig().makeApiClient(CoreV1Api);
  const baseUrl = `http://127.0.0.1:${port}`;
  const client = new RunnerClient(baseUrl);
  let api: ChildProcess | undefined;
  let supervisor: ChildProcess | undefined;
  /** Every process of the run, the killed ones included: none may log a raw stack. */
  const spawned: ChildProcess[] = [];

  const isReady = async () => (await fetch(`${baseUrl}/v1/ready`).catch(() => undefined))?.status === 200;
  async function startSupervisor(): Promise<void> {
    supervisor = spawnTs("src/supervisor/main.ts", env);
    const child = supervisor;
    spawned.push(child);
    await waitFor("the supervisor", async () => {
      if (child.exitCode !== null) throw new GiveUp(`supervisor exited (${child.exitCode}): ${capturedStderr(child)}`);
      return !api || (await isReady()) || undefined;
    }, 120_000);
  }
  async function startApi(): Promise<void> {
    api = spawnTs("src/api/main.ts", env);
    const child = api;
    spawned.push(child);
    await waitFor("the api", async () => {
      if (child.exitCode !== null) throw new GiveUp(`api exited: ${capturedStderr(child)}`);
      return (await fetch(`${baseUrl}/v1/health`)).ok || undefined;
    }, 120_000);
    await waitFor("the runner to be ready", isReady, 120_000);
  }

  /** A call that may meet a restarting process: retried on 5xx and refused connections; a 4xx is the answer. */
  async function retrying<T>(call: () => Promise<T>): Promise<T> {
    let last: unknown;
    // Wrapped: a call that succeeds with undefined (a 204) must still count as done, and a
    // 4xx must leave waitFor (which swallows what its probe throws).
    const done = await waitFor("a call through a restarting runner", async () => {
      try {
        return { value: await call() };
      } catch (error) {
        last = error;
        const status = (error as { status?: number }).status;
        return status !== undefined && status < 500 ? { error } : undefined;
      }
    }, 120_000).catch((error: unknown) => {
      throw new Error(`${String(error)}; last answer: ${String(last)}`);
    });
    if ("error" in done) throw done.error;
    return done.value;
  }

  /** Sessions that existed when a supervisor was killed: only these may be forgotten. */
  const knownAtAKill = new Set<string>();

  async function inject(fault: Fault, live: string[], rand: () => number): Promise<void> {
    switch (fault.kind) {
      case "fail":
        sim.faults.failNext({ verb: fault.verb, resource: fault.resource, subresource: fault.subresource, code: fault.code, count: fault.count });
        return;
      case "latency":
        sim.faults.addLatency({ verb: fault.verb, resource: fault.resource, subresource: fault.subresource, ms: fault.ms });
        return;
      case "clear":
        sim.faults.clear();
        return;
      case "dropWatches":
        sim.faults.dropWatches("pods");
        return;
      case "expire":
        sim.faults.expireResourceVersions();
        return;
      case "cutAttach":
        sim.faults.cutAttachStreams({ namespace: SESSION_NAMESPACE });
        return;
      case "deletePod": {
        // The run's own list meets the injected faults too; a refused list skips this fault.
        const pods = (await core.listNamespacedPod({ namespace: SESSION_NAMESPACE }).catch(() => ({ items: [] }))).items;
        const victim = pods[Math.floor(rand() * pods.length)];
        if (victim && live.length > 0) sim.faults.deletePod(SESSION_NAMESPACE, victim.metadata!.name!);
        return;
      }
      case "killSupervisor":
        for (const id of live) knownAtAKill.add(id);
        await stopChild(supervisor, "SIGKILL");
        await startSupervisor();
        return;
      case "restartApi":
        await stopChild(api, "SIGTERM");
        await startApi();
        return;
      case "none":
        return;
    }
  }

  try {
    await startSupervisor();
    await startApi();

    // Baseline: one session through both processes, then quiet.
    const warm = await client.createSession(sessionBody({ simulate: { "run-ms": 50, "exit-code": 0 } }));
    await waitFor("the warm-up session", async () => TERMINAL.has((await client.getSession(warm.sessionId)).status.kind) || undefined);
    const baseline = { api: procStatus(api!.pid!), supervisor: procStatus(supervisor!.pid!) };

    const plan = chaosPlan(run.seed, run);
    const rand = random(run.seed ^ 0x5eed);
    const sessions: { id: string; plan: (typeof plan)[number]["session"]; stopped: boolean }[] = [];
    for (let wave = 0; wave < plan.length; wave += CONCURRENCY) {
      const steps = plan.slice(wave, wave + CONCURRENCY);
      await Promise.all(
        steps.map(async (step) => {
          const created = await retrying(() => client.createSession(sessionBody({ simulate: step.session.simulate })));
          const entry = { id: created.sessionId, plan: step.session, stopped: false };
          sessions.push(entry);
          if (step.session.stopAfterMs !== undefined) {
            await new Promise((resolve) => setTimeout(resolve, step.session.stopAfterMs));
            await retrying(() => client.deleteSession(entry.id));
            entry.stopped = true;
          }
        }),
      );
      for (const step of steps) await inject(step.fault, sessions.map((s) => s.id), rand);
    }
    sim.faults.clear();

    // Every session reaches a terminal status; one still running is stopped (its stop may
    // have been lost to a killed supervisor) and must then end. A session that had ended before
    // a supervisor was killed is forgotten (404): history is volatile, and no pod may be left
    // for it (checked below).
    const statusOf = async (id: string): Promise<string> =>
      retrying(() => client.getSession(id)).then(
        (document) => document.status.kind,
        (error: unknown) => {
          if ((error as { status?: number }).status === 404) return "forgotten";
          throw error;
        },
      );
    const ended = new Map<string, string>();
    for (const session of sessions) {
      // Past the start deadline (20 s) and every scripted run, a session must end; one the run
      // stops must end after its DELETE.
      await waitFor(`session ${session.id} to end`, async () => {
        const kind = await statusOf(session.id);
        if (TERMINAL.has(kind) || kind === "forgotten") return ended.set(session.id, kind);
        if (session.plan.exitCode === undefined) await retrying(() => client.deleteSession(session.id));
        return undefined;
      }, 90_000).catch(async (error: unknown) => {
        const pods = await core.listNamespacedPod({ namespace: SESSION_NAMESPACE, labelSelector: `telo.run/session-id=${session.id}` });
        throw new Error(`${String(error)}: ${JSON.stringify({ plan: session.plan, stopped: session.stopped, status: await statusOf(session.id), pods: pods.items.map((pod) => pod.status) })}`);
      });
    }
    for (const session of sessions) {
      const kind = ended.get(session.id);
      // A session exits only when its program exits 0; exit 3 never reads as a success.
      if (kind === "exited") expect(session.plan.exitCode, `${session.id} exited`).toBe(0);
      if (session.plan.exitCode === 3) expect(kind, `${session.id} ran exit 3`).not.toBe("exited");
    }
    const forgotten = [...ended].filter(([, kind]) => kind === "forgotten").map(([id]) => id);
    expect(forgotten.filter((id) => !knownAtAKill.has(id)), "only sessions that existed when a supervisor was killed are forgotten").toEqual([]);

    // Nothing is left that no session explains: every ended session's pod (and what it owns) goes.
    await waitFor("every session pod to be collected", async () => (await core.listNamespacedPod({ namespace: SESSION_NAMESPACE })).items.length === 0 || undefined, 120_000).catch(
      async (error: unknown) => {
        const left = (await core.listNamespacedPod({ namespace: SESSION_NAMESPACE })).items;
        const described = await Promise.all(
          left.map(async (pod) => {
            const id = pod.metadata?.labels?.["telo.run/session-id"] ?? "";
            return { pod: pod.metadata?.name, phase: pod.status?.phase, deleting: pod.metadata?.deletionTimestamp, session: ended.get(id), now: id && (await statusOf(id)) };
          }),
        );
        throw new Error(`${String(error)}: ${JSON.stringify(described)}`);
      },
    );
    await waitFor("every session Service to be collected", async () => (await core.listNamespacedService({ namespace: SESSION_NAMESPACE })).items.length === 0 || undefined, 60_000);

    // Resources back near the baseline: open fds within a few of it, RSS within a bound.
    await waitFor("fd counts to return to baseline", () => {
      const now = { api: procStatus(api!.pid!), supervisor: procStatus(supervisor!.pid!) };
      return (now.api.fds <= baseline.api.fds + 8 && now.supervisor.fds <= baseline.supervisor.fds + 8) || undefined;
    }, 60_000);
    const after = { api: procStatus(api!.pid!), supervisor: procStatus(supervisor!.pid!) };
    expect(after.api.rssKb).toBeLessThan(baseline.api.rssKb * 1.5 + 64 * 1024);
    expect(after.supervisor.rssKb).toBeLessThan(baseline.supervisor.rssKb * 1.5 + 64 * 1024);
    for (const child of spawned) expect(capturedStderr(child)).not.toMatch(/\n\s+at .*\(/);
  } finally {
    await stopChild(api, "SIGKILL");
    await stopChild(supervisor, "SIGKILL");
    await sim.stop();
    await rm(dir, { recursive: true, force: true });
  }
}
