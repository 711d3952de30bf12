/**
 * Section 10, kwok scale (docs/benchmarks-kwok.md): N sessions over 3 replicas on a real
 * control plane whose nodes are kwok's fakes. Per replica: resident memory of its api and its
 * supervisor idle (shards settled, no session) and with N sessions running (after the terminal
 * attach retries the fake kubelet provokes have settled), the sessions it owns, and the target
 * RSS ≤ 2 × idle + 100 KiB per owned session; Lease writes per second idle and with N sessions.
 * Run only when asked (`npm run bench -- --only 10`): it needs root and the Go-built binaries.
 */
import { CoreV1Api, KubeConfig } from "@kubernetes/client-node";
import { loadavg } from "node:os";
import { LABEL } from "../../src/kube/specs/names.ts";
import { parseExposition, valueOf } from "../../test/support/metrics.ts";
import { waitFor } from "../../test/support/wait.ts";
import type { Row } from "../support/report.ts";
import { type EntryMode, residentBytes, SESSION_NAMESPACE } from "../support/runner.ts";
import { MiB } from "../support/stats.ts";
import { type KwokCluster, startKwokCluster } from "./control-plane.ts";
import { leaseWritesFromAudit, leaseWritesFromMetrics, podSubresourceRequests } from "./lease-writes.ts";
import { closeReplicas, type KwokReplica, startKwokReplicas } from "./replicas.ts";
import { type Created, createSessions, deleteSessions, ownedBy, waitAllStarted } from "./sessions.ts";
import { ensureKwok, missingForKwok } from "./tools.ts";

/** `perSecond`: the creates' arrival rate; `width`: creates in flight at most. */
export type KwokScaleOptions = { sessions: number; replicas: number; width: number; perSecond: number; leaseWindowMs: number };

/** KWOK_SESSIONS sets the count (the issue's target is 10,000), KWOK_CREATE_RATE the creates per second. */
const fromEnv = (name: string, fallback: number) => (process.env[name] ? Number(process.env[name]) : fallback);
export const KWOK_FULL: KwokScaleOptions = { sessions: fromEnv("KWOK_SESSIONS", 10_000), replicas: 3, width: 8, perSecond: fromEnv("KWOK_CREATE_RATE", 15), leaseWindowMs: 60_000 };
export const KWOK_QUICK: KwokScaleOptions = { sessions: fromEnv("KWOK_SESSIONS", 300), replicas: 3, width: 8, perSecond: fromEnv("KWOK_CREATE_RATE", 15), leaseWindowMs: 30_000 };
/** The renew deadline, two thirds of the Lease duration: a replica whose renewals are further apart fences itself. */
const RENEW_DEADLINE_MS = (Number(process.env.KWOK_LEASE_SECONDS ?? 15) * 2000) / 3;

const SECTION = "10 kwok scale";
const PODS_PER_NODE = 600;
/** "100 KB per session" read as 100 KiB. */
const PER_SESSION_ALLOWANCE = 100 * 1024;
/** Quiet before the idle reading, so the boot's garbage is not what is measured. */
const QUIET_MS = 10_000;
/** The attach retries have settled once the apiserver saw no attach for this long. */
const SETTLED_FOR_MS = 20_000;

type Progress = (text: string) => void;
/** Resident bytes of both processes, and the supervisor's V8 heap in use and external memory (its /metrics). */
type Memory = { api: number; supervisor: number; supervisorHeap: number; supervisorExternal: number };

const load = () => Math.round(loadavg()[0]! * 100) / 100;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function memoryOf(replicas: KwokReplica[]): Promise<Memory[]> {
  return Promise.all(
    replicas.map(async (replica) => {
      const samples = parseExposition((await replica.metrics()).split("\n").filter((line) => line.startsWith("nodejs_")).join("\n"));
      const supervisor = { process: "supervisor" };
      return {
        api: await residentBytes(replica.apiPid),
        supervisor: await residentBytes(replica.supervisorPid),
        supervisorHeap: valueOf(samples, "nodejs_heap_size_used_bytes", supervisor),
        supervisorExternal: valueOf(samples, "nodejs_external_memory_bytes", supervisor),
      };
    }),
  );
}

const mib = (bytes: number) => `${(bytes / MiB).toFixed(1)} MiB`;
/** Where a replica's memory is: each process's RSS, and the supervisor's heap in use and external. */
const split = (memory: Memory) => `api ${mib(memory.api)}, supervisor ${mib(memory.supervisor)} (heap used ${mib(memory.supervisorHeap)}, external ${mib(memory.supervisorExternal)})`;

export async function runKwokScaleBench(mode: EntryMode, options: KwokScaleOptions, progress: Progress): Promise<Row[]> {
  const problem = missingForKwok();
  if (problem) throw new Error(problem);
  if (!(options.sessions > 0)) throw new Error(`KWOK_SESSIONS must be a positive integer (got ${process.env.KWOK_SESSIONS})`);
  const kwokBinary = await ensureKwok(progress);
  const nodes = Math.max(2, Math.ceil((options.sessions * 1.2) / PODS_PER_NODE));
  progress(`kwok: control plane with ${nodes} fake nodes × ${PODS_PER_NODE} pods…`);
  const cluster = await startKwokCluster({ nodes, podsPerNode: PODS_PER_NODE, kwokBinary });
  let replicas: KwokReplica[] = [];
  // An interrupt tears everything down before the process goes. Ctrl-C reaches this process
  // twice (from the terminal's process group and relayed by tsx/npm): a repeat must not end
  // the process by the default action halfway through the teardown.
  let tearingDown = false;
  const onSignal = (signal: NodeJS.Signals) => {
    if (tearingDown) return;
    tearingDown = true;
    progress(`kwok: ${signal}, tearing down…`);
    void closeReplicas(replicas).finally(() => cluster.stop().finally(() => process.exit(130)));
  };
  process.on("SIGINT", onSignal);
  process.on("SIGTERM", onSignal);
  try {
    replicas = await startKwokReplicas(cluster, { count: options.replicas, maxSessions: options.sessions, mode });
    const rows = await measure(cluster, replicas, options, progress);
    return [{ section: SECTION, metric: "fake nodes × pods each", value: nodes, unit: `× ${PODS_PER_NODE}` }, ...rows];
  } finally {
    process.off("SIGINT", onSignal);
    process.off("SIGTERM", onSignal);
    await closeReplicas(replicas);
    const problems = await cluster.stop();
    if (problems.length > 0) progress(`kwok: clean-up problems: ${problems.join("; ")}`);
  }
}

/** Lease writes over `windowMs` from now: the runner's (audit log) and every writer's (metrics), per second. */
async function leaseRate(cluster: KwokCluster, windowMs: number) {
  const fromMs = Date.now();
  const before = leaseWritesFromMetrics(await cluster.apiserverMetrics());
  await sleep(windowMs);
  const after = leaseWritesFromMetrics(await cluster.apiserverMetrics());
  const toMs = Date.now();
  // The audit backend writes a request's line when its answer is sent: a moment for the last ones.
  await sleep(2000);
  const audit = await leaseWritesFromAudit(cluster.auditLog, fromMs, toMs);
  const seconds = (toMs - fromMs) / 1000;
  return { ...audit, runner: audit.runner / seconds, all: (after - before) / seconds, seconds };
}

/** The creates and the wait until every session runs or has failed; the Lease writes meanwhile. */
async function startAll(cluster: KwokCluster, replicas: KwokReplica[], options: KwokScaleOptions, progress: Progress) {
  progress(`kwok: creating ${options.sessions} sessions over ${replicas.length} replicas (${options.perSecond}/s, ${options.width} at most in flight)…`);
  const fromMs = Date.now();
  const createStart = performance.now();
  const { created, refused } = await createSessions(replicas, options.sessions, options, (done) => progress(`kwok: ${done} created`));
  const createSeconds = (performance.now() - createStart) / 1000;
  const loadAfterCreate = load();
  const timeoutMs = Math.max(600_000, options.sessions * 200);
  const states = await waitAllStarted(replicas, created.length, timeoutMs, (running, failed) => progress(`kwok: ${running} running, ${failed} failed`));
  const startedSeconds = (performance.now() - createStart) / 1000;
  const renewals = await leaseWritesFromAudit(cluster.auditLog, fromMs, Date.now());
  const failed = states.reduce((sum, s) => sum + (s.failed ?? 0), 0);
  return { created, refused, createSeconds, startedSeconds, loadAfterCreate, renewals, failed };
}

async function measure(cluster: KwokCluster, replicas: KwokReplica[], options: KwokScaleOptions, progress: Progress): Promise<Row[]> {
  const rows: Row[] = [];
  const row = (metric: string, value: number, unit: string, extra: Partial<Row> = {}) => rows.push({ section: SECTION, metric, value, unit, ...extra });
  await sleep(QUIET_MS);
  const idle = await memoryOf(replicas);
  progress("kwok: idle Lease writes…");
  const idleLeases = await leaseRate(cluster, options.leaseWindowMs);
  const started = await startAll(cluster, replicas, options, progress);
  progress("kwok: all started; waiting for the terminal attach retries to settle…");
  const settled = await attachSettled(cluster);
  const loaded = await memoryOf(replicas);
  const owned = await Promise.all(replicas.map(ownedBy));
  const loadAtMemory = load();
  progress("kwok: Lease writes with the sessions…");
  const loadedLeases = await leaseRate(cluster, options.leaseWindowMs);

  rows.push(...startRows(started, replicas.length, options));
  row("terminal attach requests to the apiserver", settled.attach, "requests", { note: `kwok serves no attach: each session's terminal tries ~10 times, then says so once; settled ${Math.round(settled.seconds)} s after all started` });
  row("pod log requests to the apiserver", settled.log, "requests");
  rows.push(...memoryRows(replicas, idle, loaded, owned, loadAtMemory));
  rows.push(...leaseRows("idle (0 sessions)", idleLeases), ...leaseRows(`${options.sessions} sessions`, loadedLeases));

  progress("kwok: deleting the sessions…");
  const refused = await deleteSessions(replicas, started.created, options.width);
  const gone = await podsGone(cluster, Math.max(300_000, options.sessions * 100));
  if (gone.seconds !== undefined) row("delete all → pods gone", gone.seconds, "s", refused > 0 ? { note: `${refused} delete(s) refused` } : {});
  row("session pods left after the deletes", gone.left, "pods", { target: "0", verdict: gone.left === 0 ? "met" : "MISSED", ...(refused > 0 && { note: `${refused} delete(s) refused` }) });
  return rows;
}

function startRows(started: Awaited<ReturnType<typeof startAll>>, replicaCount: number, options: KwokScaleOptions): Row[] {
  const retries = started.created.reduce((sum: number, c: Created) => sum + c.retries, 0);
  const { renewals } = started;
  const gaps = Object.entries(renewals.longestGapMs);
  const longest = Math.max(0, ...gaps.map(([, ms]) => ms));
  return [
    { section: SECTION, metric: "sessions created", value: started.created.length, unit: `of ${options.sessions}`, note: `${replicaCount} replicas, round-robin, ${options.perSecond}/s with at most ${options.width} in flight; ${retries} create(s) retried after 503/429` },
    {
      section: SECTION,
      metric: "creates refused after ~2 min of retries",
      value: started.refused.length,
      unit: "creates",
      target: "0",
      verdict: started.refused.length === 0 ? "met" : "MISSED",
      ...(started.refused.length > 0 && { note: `first: ${started.refused[0]}` }),
    },
    { section: SECTION, metric: "create rate", value: options.sessions / started.createSeconds, unit: "/s", note: `load average (1 min) ${started.loadAfterCreate} after the creates` },
    { section: SECTION, metric: "sessions that failed to start", value: started.failed, unit: "sessions", target: "0", verdict: started.failed === 0 ? "met" : "MISSED" },
    { section: SECTION, metric: "first create → every session running or failed", value: started.startedSeconds, unit: "s" },
    {
      section: SECTION,
      metric: "longest gap between a replica's Lease writes while starting",
      value: longest / 1000,
      unit: "s",
      target: `< ${(RENEW_DEADLINE_MS / 1000).toFixed(0)} s (renew deadline)`,
      verdict: longest < RENEW_DEADLINE_MS ? "met" : "MISSED",
      note: `${gaps.map(([id, ms]) => `${id} ${(ms / 1000).toFixed(1)} s`).join(", ")}; Lease writes' time in the apiserver p99 ${renewals.latencyMs.p99} ms, max ${renewals.latencyMs.max} ms`,
    },
  ];
}

function memoryRows(replicas: KwokReplica[], idle: Memory[], loaded: Memory[], owned: number[], loadAtMemory: number): Row[] {
  const rows: Row[] = [];
  replicas.forEach((replica, i) => {
    const before = idle[i]!.api + idle[i]!.supervisor;
    const after = loaded[i]!.api + loaded[i]!.supervisor;
    const limit = 2 * before + PER_SESSION_ALLOWANCE * owned[i]!;
    const name = replica.identity;
    rows.push(
      { section: SECTION, metric: `${name}: sessions owned`, value: owned[i]!, unit: "sessions" },
      { section: SECTION, metric: `${name}: RSS api + supervisor, idle`, value: before / MiB, unit: "MiB", note: split(idle[i]!) },
      {
        section: SECTION,
        metric: `${name}: RSS api + supervisor, ${owned[i]} owned sessions`,
        value: after / MiB,
        unit: "MiB",
        target: `≤ 2 × idle + 100 KiB × owned = ${(limit / MiB).toFixed(1)} MiB`,
        verdict: after <= limit ? "met" : "MISSED",
        note: `${split(loaded[i]!)}; load average (1 min) ${loadAtMemory}`,
      },
      { section: SECTION, metric: `${name}: RSS growth per owned session`, value: owned[i]! > 0 ? Math.round((after - before) / owned[i]!) : Number.NaN, unit: "bytes" },
    );
  });
  return rows;
}

function leaseRows(when: string, rate: Awaited<ReturnType<typeof leaseRate>>): Row[] {
  const replicas = Object.entries(rate.byReplica).map(([id, n]) => `${id} ${(n / rate.seconds).toFixed(2)}/s`).join(", ");
  const verbs = Object.entries(rate.byVerb).map(([verb, n]) => `${verb} ${n}`).join(", ");
  const gaps = Object.entries(rate.longestGapMs).map(([id, ms]) => `${id} ${(ms / 1000).toFixed(1)} s`).join(", ");
  return [
    {
      section: SECTION,
      metric: `Lease writes, runner, ${when}`,
      value: rate.runner,
      unit: "/s",
      note: `audit log over ${Math.round(rate.seconds)} s: ${replicas}; ${verbs}; longest gap between a replica's writes: ${gaps}; time in the apiserver p99 ${rate.latencyMs.p99} ms`,
    },
    { section: SECTION, metric: `Lease writes, every writer, ${when}`, value: rate.all, unit: "/s", note: "apiserver_request_total{resource=leases}, POST/PUT/PATCH/DELETE (the apiserver's own identity Lease included)" },
  ];
}

/** Waits until the apiserver's attach count holds still for SETTLED_FOR_MS (at most 5 min); the counts then. */
async function attachSettled(cluster: KwokCluster): Promise<{ attach: number; log: number; seconds: number }> {
  const start = performance.now();
  let last = -1;
  let stillSince = performance.now();
  for (;;) {
    const text = await cluster.apiserverMetrics();
    const attach = podSubresourceRequests(text, "attach");
    if (attach !== last) [last, stillSince] = [attach, performance.now()];
    const quiet = performance.now() - stillSince >= SETTLED_FOR_MS;
    if (quiet || performance.now() - start > 300_000) return { attach, log: podSubresourceRequests(text, "log"), seconds: (performance.now() - start) / 1000 };
    await sleep(5000);
  }
}

/**
 * Seconds until no pod the runner manages is left in the session namespace; past `timeoutMs`,
 * how many are left instead (a figure of the run, not a reason to lose the others).
 */
async function podsGone(cluster: KwokCluster, timeoutMs: number): Promise<{ seconds: number | undefined; left: number }> {
  const kubeConfig = new KubeConfig();
  kubeConfig.loadFromFile(cluster.adminKubeconfig);
  const core = kubeConfig.makeApiClient(CoreV1Api);
  const selector = { namespace: SESSION_NAMESPACE, labelSelector: `${LABEL.managedBy}=telo-k8s-runner` };
  const start = performance.now();
  try {
    await waitFor("the session pods to be gone", async () => {
      const list = await core.listNamespacedPod({ ...selector, limit: 1 });
      await sleep(1000);
      return list.items.length === 0;
    }, timeoutMs);
    return { seconds: (performance.now() - start) / 1000, left: 0 };
  } catch {
    return { seconds: undefined, left: (await core.listNamespacedPod(selector)).items.length };
  }
}
