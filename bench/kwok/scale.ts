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
import { waitFor } from "../../test/support/wait.ts";
import type { Row } from "../support/report.ts";
import { type EntryMode, residentBytes, SESSION_NAMESPACE } from "../support/runner.ts";
import { MiB } from "../support/stats.ts";
import { type KwokCluster, startKwokCluster } from "./control-plane.ts";
import { leaseWritesFromAudit, leaseWritesFromMetrics, podSubresourceRequests } from "./lease-writes.ts";
import { closeReplicas, type KwokReplica, startKwokReplicas } from "./replicas.ts";
import { createSessions, deleteSessions, ownedBy, waitAllRunning } from "./sessions.ts";
import { ensureKwok, missingForKwok } from "./tools.ts";

export type KwokScaleOptions = { sessions: number; replicas: number; width: number; leaseWindowMs: number };

/** KWOK_SESSIONS sets the count; the target is 10,000. */
const fromEnv = (fallback: number) => (process.env.KWOK_SESSIONS ? Number.parseInt(process.env.KWOK_SESSIONS, 10) : fallback);
export const KWOK_FULL: KwokScaleOptions = { sessions: fromEnv(10_000), replicas: 3, width: 24, leaseWindowMs: 60_000 };
export const KWOK_QUICK: KwokScaleOptions = { sessions: fromEnv(300), replicas: 3, width: 12, leaseWindowMs: 30_000 };

const SECTION = "10 kwok scale";
const PODS_PER_NODE = 600;
/** "100 KB per session" read as 100 KiB. */
const PER_SESSION_ALLOWANCE = 100 * 1024;
/** Quiet before the idle reading, so the boot's garbage is not what is measured. */
const QUIET_MS = 10_000;
/** The attach retries have settled once the apiserver saw no attach for this long. */
const SETTLED_FOR_MS = 20_000;

type Progress = (text: string) => void;
type Memory = { api: number; supervisor: number };

const load = () => Math.round(loadavg()[0]! * 100) / 100;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function memoryOf(replicas: KwokReplica[]): Promise<Memory[]> {
  return Promise.all(replicas.map(async (replica) => ({ api: await residentBytes(replica.apiPid), supervisor: await residentBytes(replica.supervisorPid) })));
}

export async function runKwokScaleBench(mode: EntryMode, options: KwokScaleOptions, progress: Progress): Promise<Row[]> {
  const problem = missingForKwok();
  if (problem) throw new Error(problem);
  if (!(options.sessions > 0)) throw new Error(`KWOK_SESSIONS must be a positive integer (got ${process.env.KWOK_SESSIONS})`);
  const kwokBinary = await ensureKwok(progress);
  const nodes = Math.max(2, Math.ceil((options.sessions * 1.2) / PODS_PER_NODE));
  progress(`kwok: control plane with ${nodes} fake nodes × ${PODS_PER_NODE} pods…`);
  const cluster = await startKwokCluster({ nodes, podsPerNode: PODS_PER_NODE, kwokBinary });
  let replicas: KwokReplica[] = [];
  // An interrupt tears everything down before the process goes.
  const onSignal = (signal: NodeJS.Signals) => {
    progress(`kwok: ${signal}, tearing down…`);
    void closeReplicas(replicas).finally(() => cluster.stop().finally(() => process.exit(130)));
  };
  process.once("SIGINT", onSignal);
  process.once("SIGTERM", onSignal);
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
  return { runner: audit.runner / seconds, all: (after - before) / seconds, byReplica: audit.byReplica, byVerb: audit.byVerb, seconds };
}

async function measure(cluster: KwokCluster, replicas: KwokReplica[], options: KwokScaleOptions, progress: Progress): Promise<Row[]> {
  const rows: Row[] = [];
  const row = (metric: string, value: number, unit: string, extra: Partial<Row> = {}) => rows.push({ section: SECTION, metric, value, unit, ...extra });
  await sleep(QUIET_MS);
  const idle = await memoryOf(replicas);
  progress("kwok: idle Lease writes…");
  const idleLeases = await leaseRate(cluster, options.leaseWindowMs);

  progress(`kwok: creating ${options.sessions} sessions over ${replicas.length} replicas (${options.width} at a time)…`);
  const createStart = performance.now();
  const created = await createSessions(replicas, options.sessions, options.width, (done) => progress(`kwok: ${done} created`));
  const createSeconds = (performance.now() - createStart) / 1000;
  const loadAfterCreate = load();
  await waitAllRunning(replicas, options.sessions, Math.max(600_000, options.sessions * 200), (running) => progress(`kwok: ${running} running`));
  const runningSeconds = (performance.now() - createStart) / 1000;
  progress("kwok: all running; waiting for the terminal attach retries to settle…");
  const settled = await attachSettled(cluster);
  const loaded = await memoryOf(replicas);
  const owned = await Promise.all(replicas.map(ownedBy));
  const loadAtMemory = load();
  progress("kwok: Lease writes with the sessions…");
  const loadedLeases = await leaseRate(cluster, options.leaseWindowMs);

  const retries = created.reduce((sum, c) => sum + c.retries, 0);
  row("sessions created", options.sessions, "sessions", { note: `${replicas.length} replicas, ${options.width} creates in flight, round-robin; ${retries} create(s) retried after 503/429` });
  row("create rate", options.sessions / createSeconds, "/s", { note: `load average (1 min) ${loadAfterCreate} after the creates` });
  row("first create → all running", runningSeconds, "s");
  row("terminal attach requests to the apiserver", settled.attach, "requests", { note: `kwok serves no attach: each session's terminal tries ~10 times, then says so once; settled ${Math.round(settled.seconds)} s after all ran` });
  row("pod log requests to the apiserver", settled.log, "requests");
  rows.push(...memoryRows(replicas, idle, loaded, owned, loadAtMemory));
  rows.push(...leaseRows("idle (0 sessions)", idleLeases), ...leaseRows(`${options.sessions} sessions`, loadedLeases));

  progress("kwok: deleting the sessions…");
  const refused = await deleteSessions(replicas, created, options.width);
  const podsGoneSeconds = await podsGone(cluster, Math.max(300_000, options.sessions * 100));
  row("delete all → pods gone", podsGoneSeconds, "s", { note: refused > 0 ? `${refused} delete(s) refused` : undefined });
  return rows;
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
      { section: SECTION, metric: `${name}: RSS api + supervisor, idle`, value: before / MiB, unit: "MiB", note: `api ${(idle[i]!.api / MiB).toFixed(1)} MiB, supervisor ${(idle[i]!.supervisor / MiB).toFixed(1)} MiB` },
      {
        section: SECTION,
        metric: `${name}: RSS api + supervisor, ${owned[i]} owned sessions`,
        value: after / MiB,
        unit: "MiB",
        target: `≤ 2 × idle + 100 KiB × owned = ${(limit / MiB).toFixed(1)} MiB`,
        verdict: after <= limit ? "met" : "MISSED",
        note: `api ${(loaded[i]!.api / MiB).toFixed(1)} MiB, supervisor ${(loaded[i]!.supervisor / MiB).toFixed(1)} MiB; load average (1 min) ${loadAtMemory}`,
      },
      { section: SECTION, metric: `${name}: RSS growth per owned session`, value: owned[i]! > 0 ? Math.round((after - before) / owned[i]!) : Number.NaN, unit: "bytes" },
    );
  });
  return rows;
}

function leaseRows(when: string, rate: Awaited<ReturnType<typeof leaseRate>>): Row[] {
  const replicas = Object.entries(rate.byReplica).map(([id, n]) => `${id} ${(n / rate.seconds).toFixed(2)}/s`).join(", ");
  const verbs = Object.entries(rate.byVerb).map(([verb, n]) => `${verb} ${n}`).join(", ");
  return [
    { section: SECTION, metric: `Lease writes, runner, ${when}`, value: rate.runner, unit: "/s", note: `audit log over ${Math.round(rate.seconds)} s: ${replicas}; ${verbs}` },
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

/** Seconds until no pod the runner manages is left in the session namespace. */
async function podsGone(cluster: KwokCluster, timeoutMs: number): Promise<number> {
  const kubeConfig = new KubeConfig();
  kubeConfig.loadFromFile(cluster.adminKubeconfig);
  const core = kubeConfig.makeApiClient(CoreV1Api);
  const start = performance.now();
  await waitFor("the session pods to be gone", async () => {
    const list = await core.listNamespacedPod({ namespace: SESSION_NAMESPACE, labelSelector: `${LABEL.managedBy}=telo-k8s-runner`, limit: 1 });
    await sleep(1000);
    return list.items.length === 0;
  }, timeoutMs);
  return (performance.now() - start) / 1000;
}
