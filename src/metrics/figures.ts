/**
 * The supervisor's figures, in one place (docs/operating.md "Metrics" lists them and where each
 * is moved). Callers use the small functions below, never the metric objects, so a figure's
 * meaning is kept here. The api process never imports this module: it shows only its own
 * figures (src/metrics/exposition.ts) and the defaults.
 */
import { Counter, Gauge, Histogram } from "prom-client";
import { registry } from "./registry.ts";

const registers = [registry];

/** What the sessions gauge reads: the registry's sessions, by mode and status. */
export type SessionCensus = () => Iterable<{ mode: string; status: { kind: string } }>;

let census: SessionCensus = () => [];

/** Sessions held by the supervisor's registry, by mode and status; counted at each scrape. */
new Gauge({
  name: "runner_sessions",
  help: "Sessions held by the supervisor, by mode and state (status kind).",
  labelNames: ["mode", "state"] as const,
  registers,
  collect() {
    this.reset();
    for (const session of census()) this.inc({ mode: session.mode, state: session.status.kind });
  },
});

// One line a figure: its name, its help and its labels are what differ between them.
function counter<L extends string>(name: string, help: string, labelNames: readonly L[]): Counter<L> {
  return new Counter({ name, help, labelNames, registers });
}

function histogram<L extends string>(name: string, help: string, labelNames: readonly L[], buckets: number[]): Histogram<L> {
  return new Histogram({ name, help, labelNames, buckets, registers });
}

function gauge(name: string, help: string): Gauge {
  return new Gauge({ name, help, registers });
}

/** Session launches (new, resumed, re-adopted) by the first status they reached. */
const starts = counter("runner_session_starts_total", "Session launches by mode and outcome (the first status after starting: running, failed, stopped, exited, suspended).", ["mode", "outcome"]);

const startFailures = counter("runner_session_start_failures_total", "Session launches whose first status was failed, by mode and reason: the step they did not get through (build, create, scheduling, delivery, boot).", ["mode", "reason"]);

const startLatency = histogram("runner_session_start_seconds", "Seconds from a launch until it first reached a stage: build, provision, boot (progress phases) or running.", ["mode", "stage"], [0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 20, 30, 60, 120, 300]);

const evictions = counter("runner_session_evictions_total", "Sessions dropped from the registry: capacity (making room for a new one) or expired (retention ended).", ["reason"]);

const sseSubscribers = gauge("runner_sse_subscribers", "Server-Sent Event streams being served.");

const terminalBytes = counter("runner_terminal_bytes_total", "Terminal bytes relayed: out (workload output to clients) and in (client stdin to the workload).", ["direction"]);
// Bound once: counted for every chunk a terminal relays, where a label lookup per call showed.
const terminalBytesOut = terminalBytes.labels({ direction: "out" });
const terminalBytesIn = terminalBytes.labels({ direction: "in" });

const terminalsOpened = counter("runner_terminals_opened_total", "Terminal WebSockets opened, by how the client's connection reached the supervisor: handed (the api beside it passed the client's socket over) or spliced (through a connection of an api's own, this pod's or a peer's).", ["path"]);

const kubeRequests = counter("runner_kube_requests_total", "Kubernetes API requests made through the typed clients, by verb and resource.", ["verb", "resource"]);

const kubeErrors = counter("runner_kube_request_errors_total", "Kubernetes API requests that failed, by verb, resource and code (the HTTP status, or 'network').", ["verb", "resource", "code"]);

const watchRestarts = counter("runner_pod_watch_restarts_total", "Re-openings of the shared session pod watch: resume (from the last version) or relist (after an error or 410).", ["kind"]);

const attachStreams = gauge("runner_attach_streams_open", "pods/attach streams to session containers that are open (or opening).");

const buildDuration = histogram("runner_image_build_seconds", "Session image build durations, by outcome (succeeded or failed).", ["outcome"], [5, 10, 20, 30, 60, 120, 300, 600, 1200, 1800]);

/** What the warm pool gauge reads: its unclaimed pods, ready for a claim or not yet. */
export type PoolCensus = () => { ready: number; starting: number };

let poolCensus: PoolCensus = () => ({ ready: 0, starting: 0 });

new Gauge({
  name: "runner_warm_pool_pods",
  help: "Unclaimed warm pool pods: ready (a claim may take it) or starting.",
  labelNames: ["state"] as const,
  registers,
  collect() {
    const { ready, starting } = poolCensus();
    this.set({ state: "ready" }, ready);
    this.set({ state: "starting" }, starting);
  },
});

const poolStarts = new Counter({
  name: "runner_warm_pool_starts_total",
  help: "Run session starts by how the warm pool served them: warm (a claimed pool pod) or cold (a pod of its own).",
  labelNames: ["start"] as const,
  registers,
});

const maxSessions = gauge("runner_max_sessions", "RUNNER_MAX_SESSIONS: the sessions this supervisor holds before it refuses a new one (ended and suspended ones are evicted to make room; re-adopted ones are never refused).");

const warmPoolSize = gauge("runner_warm_pool_size", "RUNNER_WARM_POOL_SIZE: the warm pool pods the installation keeps; 0 when the pool is off.");

/** The supervisor's configured ceiling, beside runner_sessions for a "near capacity" alert. */
export function sessionCapacity(max: number): void {
  maxSessions.set(max);
}

/** The pool's configured size, so that an empty pool is told apart from one that is off. */
export function warmPoolConfigured(size: number): void {
  warmPoolSize.set(size);
}

/** The warm pool, read at each scrape (the backend's boot, when the pool is on). */
export function observeWarmPool(source: PoolCensus): void {
  poolCensus = source;
}

export function warmPoolStart(start: "warm" | "cold"): void {
  poolStarts.inc({ start });
}

/** The supervisor's registry, read at each scrape (the supervisor's start). */
export function observeSessions(source: SessionCensus): void {
  census = source;
}

export type StartTracker = {
  /** A progress phase was reported. */
  stage(phase: string): void;
  /**
   * A status was recorded; the first one other than `starting` ends the start. A failed one
   * says why (`reason`, computed only when asked, from how far the start got).
   */
  status(kind: string, reason?: (got: { building: boolean }) => string): void;
};

/** One launch of a session (the core's launch path); `now` in milliseconds. */
export function trackStart(mode: string, now: () => number): StartTracker {
  const began = now();
  const seen = new Set<string>();
  let ended = false;
  const reached = (stage: string) => {
    if (seen.has(stage)) return;
    seen.add(stage);
    startLatency.observe({ mode, stage }, (now() - began) / 1000);
  };
  return {
    stage(phase) {
      if (!ended) reached(phase);
    },
    status(kind, reason) {
      if (ended || kind === "starting") return;
      ended = true;
      if (kind === "running") reached("running");
      starts.inc({ mode, outcome: kind });
      // Provisioning follows the build: a start that began building and never provisioned failed in it.
      if (kind === "failed" && reason) startFailures.inc({ mode, reason: reason({ building: seen.has("build") && !seen.has("provision") }) });
    },
  };
}

export function sessionEvicted(reason: "capacity" | "expired"): void {
  evictions.inc({ reason });
}

/** An SSE stream began; the returned function ends it (once). */
export function sseSubscriberOpened(): () => void {
  sseSubscribers.inc();
  let open = true;
  return () => {
    if (open) sseSubscribers.dec();
    open = false;
  };
}

export function terminalBytesRelayed(direction: "in" | "out", bytes: number): void {
  (direction === "out" ? terminalBytesOut : terminalBytesIn).inc(bytes);
}

export type KubeRequestLabels = { verb: string; resource: string };

/** A terminal's WebSocket opened on the client's own socket (`handed`) or on an api's connection (`spliced`). */
export function terminalOpened(path: "handed" | "spliced"): void {
  terminalsOpened.inc({ path });
}

export function kubeRequestMade(labels: KubeRequestLabels, failure: number | "network" | undefined): void {
  kubeRequests.inc(labels);
  if (failure !== undefined) kubeErrors.inc({ ...labels, code: String(failure) });
}

export function podWatchRestarted(kind: "resume" | "relist"): void {
  watchRestarts.inc({ kind });
}

/** An attach stream was opened; it counts as open until `closed` settles. */
export function trackAttachStream(closed: Promise<unknown>): void {
  attachStreams.inc();
  const close = () => attachStreams.dec();
  closed.then(close, close);
}

/** Times an image build; the build's own result is returned unchanged. */
export async function timeBuild<T>(build: Promise<T>, now: () => number = Date.now): Promise<T> {
  const began = now();
  try {
    const result = await build;
    buildDuration.observe({ outcome: "succeeded" }, (now() - began) / 1000);
    return result;
  } catch (error) {
    buildDuration.observe({ outcome: "failed" }, (now() - began) / 1000);
    throw error;
  }
}
