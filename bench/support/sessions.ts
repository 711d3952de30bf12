/**
 * Runner sessions and their direct client-node counterparts, as the sections use them: start
 * and wait for `running`, keep an SSE subscriber reading, and create "the same pod" directly
 * and watch it to Running (the baselines the issue names).
 */
import { type CoreV1Api, type KubeConfig, type V1Pod, Watch } from "@kubernetes/client-node";
import type { RunnerClient, StreamItem } from "../../src/client/index.ts";
import type { SimulatedCluster } from "../../src/sim/index.ts";
import { runPodName } from "../../src/kube/specs/names.ts";
import { podCopy, SESSION_NAMESPACE } from "./runner.ts";
import { sessionBody } from "../../test/support/session-body.ts";
import { retryingOn503 } from "../../test/support/retry.ts";
import { waitFor } from "../../test/support/wait.ts";
import { since } from "./stats.ts";

type Body = Parameters<RunnerClient["createSession"]>[0];

const TERMINAL_KINDS = new Set(["exited", "failed", "stopped"]);

/**
 * `POST /v1/sessions`, then the event stream up to `running`: `ms` is the whole, `createdMs`
 * the POST's answer (201) alone; `startedAt` is the performance.now() of the POST.
 */
export async function startSession(client: RunnerClient, body: Body = sessionBody()): Promise<{ sessionId: string; ms: number; createdMs: number; startedAt: number }> {
  const start = performance.now();
  const { sessionId } = await client.createSession(body);
  const createdMs = since(start);
  // Among replicas a new session's stream can answer 503 for a moment (an api forwarding by a
  // placement a second old): the contract's "retry".
  await retryingOn503(`session ${sessionId} running`, () => untilRunning(client, sessionId), RUNNING_WITHIN_MS);
  return { sessionId, ms: since(start), createdMs, startedAt: start };
}

const RUNNING_WITHIN_MS = 120_000;

/** True once the session's stream says `running` (waitFor's "done"). */
async function untilRunning(client: RunnerClient, sessionId: string): Promise<true> {
  for await (const item of client.events(sessionId, { reconnect: false })) {
    if (!("event" in item) || item.event.type !== "status") continue;
    const kind = item.event.status.kind;
    if (kind === "running") return true;
    if (TERMINAL_KINDS.has(kind)) throw new Error(`session ${sessionId} ended before running: ${JSON.stringify(item.event.status)}`);
  }
  throw new Error(`the event stream of ${sessionId} ended before running`);
}

/** An SSE subscriber that keeps reading in the background until `stop()`. */
export function subscribe(client: RunnerClient, sessionId: string, onItem: (item: StreamItem) => void = () => undefined): { stop(): void; ended: Promise<void> } {
  const abort = new AbortController();
  const ended = (async () => {
    try {
      for await (const item of client.events(sessionId, { signal: abort.signal })) onItem(item);
    } catch {
      // aborted, or the session went away: either ends the subscriber
    }
  })();
  return { stop: () => abort.abort(), ended };
}

/** Runs `fn` over `items`, at most `width` at a time. */
export async function inBatches<T, R>(items: T[], width: number, fn: (item: T, index: number) => Promise<R>): Promise<R[]> {
  const results: R[] = new Array(items.length);
  let next = 0;
  const worker = async () => {
    while (next < items.length) {
      const i = next++;
      results[i] = await fn(items[i]!, i);
    }
  };
  await Promise.all(Array.from({ length: Math.min(width, items.length) }, worker));
  return results;
}

/** The pod the runner created for a session. */
export function sessionPod(core: CoreV1Api, sessionId: string): Promise<V1Pod> {
  return core.readNamespacedPod({ namespace: SESSION_NAMESPACE, name: runPodName(sessionId) });
}

export const DIRECT_LABEL = { "bench.k8s-runner.dev/direct": "true" };

/**
 * The baseline of a start: create the runner's pod spec directly and watch it (one watch per
 * pod, from the create's resourceVersion, as a plain client-node program does) to Running.
 */
export async function directStart(kubeConfig: KubeConfig, core: CoreV1Api, template: V1Pod, name: string): Promise<number> {
  const start = performance.now();
  const body = podCopy(template, name);
  body.metadata!.labels = { ...DIRECT_LABEL };
  const created = await core.createNamespacedPod({ namespace: SESSION_NAMESPACE, body });
  await watchUntilRunning(kubeConfig, name, created.metadata!.resourceVersion!);
  return since(start);
}

export async function watchUntilRunning(kubeConfig: KubeConfig, name: string, resourceVersion: string): Promise<void> {
  let settle!: (error?: Error) => void;
  const done = new Promise<void>((resolve, reject) => (settle = (error) => (error ? reject(error) : resolve())));
  const abort = await new Watch(kubeConfig).watch(
    `/api/v1/namespaces/${SESSION_NAMESPACE}/pods`,
    { fieldSelector: `metadata.name=${name}`, resourceVersion },
    (_type: string, pod: V1Pod) => {
      const phase = pod.status?.phase;
      if (phase === "Running") settle();
      else if (phase === "Failed" || phase === "Succeeded") settle(new Error(`direct pod ${name} ended: ${phase}`));
    },
    (error: unknown) => settle(error ? (error as Error) : new Error(`watch of ${name} ended before Running`)),
  );
  try {
    await done;
  } finally {
    abort.abort();
  }
}

/** Removes every direct (baseline) pod and waits until the namespace holds none of them. */
export async function clearDirectPods(core: CoreV1Api): Promise<void> {
  const labelSelector = Object.entries(DIRECT_LABEL).map(([k, v]) => `${k}=${v}`).join(",");
  await core.deleteCollectionNamespacedPod({ namespace: SESSION_NAMESPACE, labelSelector, gracePeriodSeconds: 0 });
  await waitFor("direct pods to be gone", async () => (await core.listNamespacedPod({ namespace: SESSION_NAMESPACE, labelSelector })).items.length === 0, 30_000);
}

/**
 * Waits until the cluster has seen no request for `quietMs` (at most `limitMs`): work the
 * runner does after answering (a late DELETE of an ended pod) must not be billed to the next
 * measurement.
 */
export async function quiesce(sim: SimulatedCluster, quietMs = 500, limitMs = 15_000): Promise<void> {
  const total = () => Object.values(sim.counters().requests).reduce((a, b) => a + b, 0);
  const deadline = Date.now() + limitMs;
  let last = total();
  for (;;) {
    await new Promise((resolve) => setTimeout(resolve, quietMs));
    const now = total();
    if (now === last || Date.now() > deadline) return;
    last = now;
  }
}

/** Stops sessions through the runner and waits until none of their pods is left. */
export async function stopSessions(client: RunnerClient, core: CoreV1Api, sessionIds: string[]): Promise<void> {
  await inBatches(sessionIds, 50, (id) => client.deleteSession(id));
  const names = new Set(sessionIds.map(runPodName));
  await waitFor(
    "stopped sessions' pods to be gone",
    async () => !(await core.listNamespacedPod({ namespace: SESSION_NAMESPACE })).items.some((pod) => names.has(pod.metadata?.name ?? "")),
    60_000,
  );
}

export type StartSamples = { seqRunner: number[]; seqDirect: number[]; conRunner: number[]; conDirect: number[] };

/**
 * The runner's `POST → running` against the direct start of `template`, one at a time
 * (`sequential`, runner and baseline alternating so a noisy moment hits both; both sides'
 * sessions and pods stay up until the end, so each sample sees the same population), then
 * `concurrent` at once, `rounds` times (each round runner then baseline on an empty namespace).
 */
export async function sampleStarts(
  runner: { client: RunnerClient; core: CoreV1Api; kubeConfig: KubeConfig },
  template: V1Pod,
  directName: () => string,
  options: { sequential: number; concurrent: number; rounds: number },
): Promise<StartSamples> {
  const { client, core, kubeConfig } = runner;
  const samples: StartSamples = { seqRunner: [], seqDirect: [], conRunner: [], conDirect: [] };
  const seqIds: string[] = [];
  for (let i = 0; i < options.sequential; i++) {
    const started = await startSession(client);
    samples.seqRunner.push(started.ms);
    seqIds.push(started.sessionId);
    samples.seqDirect.push(await directStart(kubeConfig, core, template, directName()));
  }
  await stopSessions(client, core, seqIds);
  await clearDirectPods(core);

  for (let round = 0; round < options.rounds; round++) {
    const started = await Promise.all(Array.from({ length: options.concurrent }, () => startSession(client)));
    samples.conRunner.push(...started.map((s) => s.ms));
    await stopSessions(client, core, started.map((s) => s.sessionId));
    samples.conDirect.push(...(await Promise.all(Array.from({ length: options.concurrent }, () => directStart(kubeConfig, core, template, directName())))));
    await clearDirectPods(core);
  }
  return samples;
}
