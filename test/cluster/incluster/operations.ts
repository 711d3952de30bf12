/**
 * Operating the in-cluster runner as operators do, with a live session: its pod replaced
 * (`kubectl rollout restart`, `helm upgrade` to a new tag), its supervisor container killed, and
 * many sessions under the shipped memory limits. Each returns what it measured, printed by the
 * test and quoted in docs/deployment.md.
 */
import { execFile } from "node:child_process";
import { promisify } from "node:util";
import { expect, inject } from "vitest";
import { type RunnerClient, type StreamItem } from "../../../src/client/index.ts";
import { kubeSessionBody } from "../../support/kube-runner.ts";
import { eventsUntil, framesUntilText, isStatus, textOf } from "../../support/streams.ts";
import { retryingOn503 } from "../../support/retry.ts";
import { waitFor } from "../../support/wait.ts";
import { RUNNER_NAMESPACE } from "../fixture/cluster.ts";
import { kubectl } from "../pods.ts";
import { readyOnNewConnection, readyRunner, runnerPods, servedThroughService, type RunnerPod } from "./install.ts";

const run = promisify(execFile);

type Frames = Awaited<ReturnType<typeof framesUntilText>>;
const seqs = (list: Frames) => list.flatMap((frame) => (frame.kind === "bytes" ? [frame.seq] : []));

/** A running session whose terminal echoed once; the last seq seen. */
async function liveSession(client: RunnerClient, text: string): Promise<{ sessionId: string; lastSeq: number }> {
  const { sessionId } = await client.createSession(kubeSessionBody({ output: `${text}\r\n` }));
  await eventsUntil(client, sessionId, isStatus("running"));
  const terminal = client.terminal(sessionId);
  await terminal.send(`${text}\r`);
  const lastSeq = Math.max(...seqs(await framesUntilText(terminal, text)));
  terminal.close();
  return { sessionId, lastSeq };
}

/** After the runner came back: the same session running, its terminal resumed after `lastSeq`. */
async function resumes(client: RunnerClient, sessionId: string, lastSeq: number): Promise<void> {
  // A 503 (with retry-after) is the contract's "retry": a terminating pod's api may still answer
  // for a moment after its supervisor handed over, and a session may be between replicas.
  const document = await retryingOn503("the session answered after the replacement", () => client.getSession(sessionId), 60_000);
  expect(document.status.kind).toBe("running");
  const again = client.terminal(sessionId, { lastSeq });
  await again.send("after\r");
  const after = await framesUntilText(again, "after");
  expect(textOf(after)).toContain("after");
  expect(seqs(after).every((seq) => seq > lastSeq)).toBe(true);
  again.close();
}

/**
 * The runner's pod replaced by `replace` under a live session: one event stream across it
 * (the client reconnects with Last-Event-ID), the new pod on `ref` adopts the session under the
 * same id, the terminal resumes after its seq, and no event id is seen twice. Returns the
 * seconds /v1/ready failed through the Service.
 */
export async function acrossReplacement(input: { client: RunnerClient; baseUrl: string; oldPod: string; ref: string; replace: () => Promise<void> }): Promise<{ gapSeconds: number; pod: RunnerPod }> {
  const { client, baseUrl } = input;
  const { sessionId, lastSeq } = await liveSession(client, "before");
  const seen: StreamItem[] = [];
  const abort = new AbortController();
  const stream = (async () => {
    for await (const item of client.events(sessionId, { signal: abort.signal, maxReconnectDelayMs: 500 })) seen.push(item);
  })().catch(() => undefined);

  await input.replace();
  // A Recreate install is down between its pods; a rolling one (several replicas' settings) may
  // never be: the gap is how long /v1/ready failed through the Service, 0 if it never did. Each
  // probe dials anew, as a new client does (a kept-alive connection would stay with the old pod),
  // and probing goes on until the old pod is gone altogether, its endpoint with it.
  let down: number | undefined;
  let up: number | undefined;
  const pod = await waitFor("the replaced runner to answer /v1/ready, the old pod gone", async () => {
    if (!(await readyOnNewConnection(baseUrl))) {
      down ??= Date.now();
      up = undefined;
      return undefined;
    }
    up ??= Date.now();
    const pods = await runnerPods({ terminating: true });
    return pods.length === 1 && pods[0]!.name !== input.oldPod && pods[0]!.ready ? readyRunner(input.ref) : undefined;
  }, 240_000);
  const gapSeconds = down === undefined ? 0 : ((up ?? Date.now()) - down) / 1000;

  await resumes(client, sessionId, lastSeq);
  await client.deleteSession(sessionId);
  await waitFor("the stream to see the stop", () => seen.some((item) => "event" in item && isStatus("stopped")(item.event)) || undefined, 60_000);
  abort.abort();
  await stream;
  const ids = seen.flatMap((item) => ("id" in item ? [item.id] : []));
  expect(new Set(ids).size).toBe(ids.length);
  return { gapSeconds, pod };
}

type PodStatusJson = { status: { conditions?: Array<{ type: string; status: string }>; containerStatuses?: Array<{ name: string; containerID?: string; restartCount: number; lastState?: { terminated?: { reason?: string } } }> } };

async function podStatus(name: string): Promise<PodStatusJson["status"]> {
  return (JSON.parse(await kubectl(["-n", RUNNER_NAMESPACE, "get", "pod", name, "-o", "json"])) as PodStatusJson).status;
}

const isReady = (status: PodStatusJson["status"]) => status.conditions?.some((c) => c.type === "Ready" && c.status === "True") ?? false;

/**
 * The supervisor container SIGKILLed through the node's containerd under a live session: the
 * api's /v1/ready fails (polled on the pod's own address), the pod turns NotReady, the kubelet
 * restarts the container, the new supervisor adopts the session, and the pod turns Ready.
 * Returns the seconds from the kill to Ready again.
 */
export async function supervisorKilled(client: RunnerClient, baseUrl: string, pod: RunnerPod): Promise<number> {
  const { sessionId, lastSeq } = await liveSession(client, "before the kill");
  const before = await podStatus(pod.name);
  const supervisor = before.containerStatuses?.find((c) => c.name === "supervisor");
  const id = supervisor?.containerID?.replace(/^containerd:\/\//, "") ?? "";
  expect(id).not.toBe("");
  const killed = Date.now();
  await run("ctr", [`--address=${inject("realCluster").containerdSocket}`, "--namespace=k8s.io", "tasks", "kill", "--signal", "SIGKILL", id]);
  await waitFor("/v1/ready to fail on the pod", async () => {
    const response = await fetch(`http://${pod.ip}:8062/v1/ready`, { signal: AbortSignal.timeout(1_000) }).catch(() => undefined);
    return (response !== undefined && response.status !== 200) || undefined;
  }, 30_000);
  await waitFor("the pod to turn NotReady", async () => !isReady(await podStatus(pod.name)) || undefined, 60_000);
  const after = await waitFor("the supervisor restarted and the pod Ready", async () => {
    const status = await podStatus(pod.name);
    const restarted = status.containerStatuses?.find((c) => c.name === "supervisor");
    return isReady(status) && restarted && restarted.restartCount === (supervisor?.restartCount ?? 0) + 1 ? status : undefined;
  }, 120_000);
  const seconds = (Date.now() - killed) / 1000;
  await servedThroughService(baseUrl);
  // The api container went on: only the supervisor restarted.
  expect(after.containerStatuses?.find((c) => c.name === "api")?.restartCount).toBe(before.containerStatuses?.find((c) => c.name === "api")?.restartCount);
  await resumes(client, sessionId, lastSeq);
  await client.deleteSession(sessionId);
  await eventsUntil(client, sessionId, isStatus("stopped"));
  return seconds;
}

type Summary = { pods: Array<{ podRef: { name: string; namespace: string }; containers?: Array<{ name: string; memory?: { rssBytes?: number; workingSetBytes?: number } }> }> };

/** Each container's RSS and working set, MiB, from the kubelet's summary (its cgroup figures). */
async function containerMemory(podName: string): Promise<Record<string, { rssMiB: number; workingSetMiB: number }>> {
  const summary = JSON.parse(await kubectl(["get", "--raw", "/api/v1/nodes/k8s-runner-node/proxy/stats/summary"])) as Summary;
  const pod = summary.pods.find((p) => p.podRef.namespace === RUNNER_NAMESPACE && p.podRef.name === podName);
  const mib = (bytes: number | undefined) => Math.round(((bytes ?? 0) / 2 ** 20) * 10) / 10;
  return Object.fromEntries((pod?.containers ?? []).map((c) => [c.name, { rssMiB: mib(c.memory?.rssBytes), workingSetMiB: mib(c.memory?.workingSetBytes) }]));
}

/**
 * `count` predefined-app sessions live at once (app pods have no init container, so at the
 * lowered app ceilings they fit the node's two cores), each with a terminal attached and echoing, under the runner's
 * shipped memory limits: no container of the runner OOM-killed or restarted. Returns each
 * container's peak memory of the samples taken while they were live.
 */
export async function manyLiveSessions(client: RunnerClient, pod: RunnerPod, count: number): Promise<Record<string, { rssMiB: number; workingSetMiB: number }>> {
  const ids: string[] = [];
  for (let i = 0; i < count; i += 10) {
    const batch = await Promise.all(Array.from({ length: Math.min(10, count - i) }, () => client.createAppSession("echo")));
    ids.push(...batch.map((created) => created.sessionId));
  }
  await Promise.all(ids.map((id) => eventsUntil(client, id, isStatus("running"))));
  const terminals = ids.map((id) => client.terminal(id));
  await Promise.all(terminals.map(async (terminal, i) => {
    await terminal.send(`live ${i}\r`);
    await framesUntilText(terminal, `live ${i}`);
  }));
  const peak: Record<string, { rssMiB: number; workingSetMiB: number }> = {};
  for (let sample = 0; sample < 5; sample++) {
    for (const [name, figures] of Object.entries(await containerMemory(pod.name))) {
      peak[name] = { rssMiB: Math.max(peak[name]?.rssMiB ?? 0, figures.rssMiB), workingSetMiB: Math.max(peak[name]?.workingSetMiB ?? 0, figures.workingSetMiB) };
    }
    await new Promise((resolve) => setTimeout(resolve, 2_000));
  }
  for (const terminal of terminals) terminal.close();
  const status = await podStatus(pod.name);
  for (const container of status.containerStatuses ?? []) {
    expect(container.lastState?.terminated?.reason).toBeUndefined();
    expect(container.restartCount).toBe(pod.restarts[container.name]);
  }
  await Promise.all(ids.map((id) => client.deleteSession(id)));
  await Promise.all(ids.map((id) => eventsUntil(client, id, isStatus("stopped"))));
  return peak;
}
