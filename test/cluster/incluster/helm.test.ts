/**
 * The runner in the cluster from `helm install` of k8s/chart (same image references as the
 * kustomize install), then operated: `helm upgrade` to a new image tag while a session is live.
 * The Deployment's Recreate strategy replaces the pod; the new supervisor adopts the session
 * under the same id, the event stream started before the upgrade resumes with Last-Event-ID,
 * and the terminal reattaches after its last seq. The gap is measured and printed.
 */
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { REPO_ROOT } from "../../deploy/render.ts";
import { RunnerClient } from "../../../src/client/index.ts";
import type { StreamItem } from "../../../src/client/index.ts";
import { kubeSessionBody } from "../../support/kube-runner.ts";
import { eventsUntil, framesUntilText, isStatus, textOf } from "../../support/streams.ts";
import { waitFor } from "../../support/wait.ts";
import { appSession, callsFromPod, consoleLists, metricsServed, poolClaim, runSessionWithTerminal, SERVICE_ACCOUNT_USER, watchSession } from "./checks.ts";
import { enforceNetworkPolicy, isolationHolds } from "./isolation.ts";
import { helmInstall, importRunnerImage, readyRunner, RUNNER_REPOSITORY, serviceUrl, tagImage, uninstall, type RunnerPod } from "./install.ts";

describe("the runner installed with helm install", () => {
  let pod: RunnerPod;
  let client: RunnerClient;
  let baseUrl: string;
  let ref: string;

  beforeAll(async () => {
    // Enforced before the install, so every check below also runs under the shipped NetworkPolicy.
    await enforceNetworkPolicy();
    ref = (await importRunnerImage("helm")).ref;
    // The fixture applied k8s/base with kubectl; helm adopts nothing it did not create.
    await uninstall({ overlay: join(REPO_ROOT, "k8s/base") });
    await helmInstall("helm");
    pod = await readyRunner(ref);
    baseUrl = await serviceUrl("http");
    client = new RunnerClient(baseUrl);
  }, 600_000);

  afterAll(async () => {
    await uninstall({ helm: true });
  }, 240_000);

  it("runs a session through its Service with the bundle fetched by name, metrics and the console's list", async () => {
    expect(pod.restarts).toEqual({ api: 0, supervisor: 0 });
    const sessionId = await runSessionWithTerminal(client);
    await metricsServed(baseUrl);
    await consoleLists(baseUrl, sessionId);
    await client.deleteSession(sessionId);
    await eventsUntil(client, sessionId, isStatus("stopped"));
  });

  it("serves a session from its warm pool", async () => {
    await poolClaim(client, baseUrl);
  });

  it("runs a watch session with its workspace", async () => {
    await watchSession(client);
  });

  it("runs the predefined app", async () => {
    await appSession(client);
  });

  it("fences its session pods by the NetworkPolicy, enforced", async () => {
    await isolationHolds(client);
  }, 240_000);

  it("called the apiserver only as its ServiceAccount, from its pod, never refused", async () => {
    const calls = await callsFromPod(pod.ip);
    expect(calls.calls).toBeGreaterThan(0);
    expect(calls.users).toEqual([SERVICE_ACCOUNT_USER]);
    expect(calls.forbidden).toEqual([]);
  });

  it("keeps a live session across helm upgrade to a new image tag: same id, events resumed, terminal reattached", async () => {
    const { sessionId } = await client.createSession(kubeSessionBody({ output: "before the upgrade\r\n" }));
    await eventsUntil(client, sessionId, isStatus("running"));
    const terminal = client.terminal(sessionId);
    await terminal.send("one\r");
    const frames = await framesUntilText(terminal, "one");
    const seqs = (list: typeof frames) => list.flatMap((frame) => (frame.kind === "bytes" ? [frame.seq] : []));
    const lastSeq = Math.max(...seqs(frames));
    terminal.close();

    // One stream across the upgrade: it reconnects with Last-Event-ID on its own.
    const seen: StreamItem[] = [];
    const abort = new AbortController();
    const stream = (async () => {
      for await (const item of client.events(sessionId, { signal: abort.signal, maxReconnectDelayMs: 500 })) seen.push(item);
    })().catch(() => undefined);

    await tagImage(ref, `${RUNNER_REPOSITORY}:helm-2`);
    const upgradeStarted = Date.now();
    await helmInstall("helm-2", "upgrade");
    let down: number | undefined;
    const newPod = await waitFor("the upgraded runner to answer /v1/ready", async () => {
      const ready = await fetch(`${baseUrl}/v1/ready`, { signal: AbortSignal.timeout(1_000) }).then((r) => r.status === 200, () => false);
      if (!ready) down ??= Date.now();
      if (!ready || down === undefined) return undefined;
      return readyRunner(`${RUNNER_REPOSITORY}:helm-2`);
    }, 240_000);
    const gapSeconds = (Date.now() - (down ?? upgradeStarted)) / 1000;
    console.log(`[in-cluster] helm upgrade: API unavailable for ${gapSeconds.toFixed(1)} s`);
    expect(newPod.name).not.toBe(pod.name);

    expect((await client.getSession(sessionId)).status.kind).toBe("running");
    const again = client.terminal(sessionId, { lastSeq });
    await again.send("two\r");
    const after = await framesUntilText(again, "two");
    expect(textOf(after)).toContain("two");
    expect(seqs(after).every((seq) => seq > lastSeq)).toBe(true);
    again.close();
    await client.deleteSession(sessionId);
    await waitFor("the stream to see the stop", () => seen.some((item) => "event" in item && isStatus("stopped")(item.event)) || undefined, 60_000);
    abort.abort();
    await stream;
    const ids = seen.flatMap((item) => ("id" in item ? [item.id] : []));
    // Resumed, not replayed: no event id twice.
    expect(new Set(ids).size).toBe(ids.length);
  });
});
