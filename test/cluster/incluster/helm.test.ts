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
import { eventsUntil, isStatus } from "../../support/streams.ts";
import { waitFor } from "../../support/wait.ts";
import { appSession, callsFromPod, consoleLists, metricsServed, poolClaim, runSessionWithTerminal, SELF_URL, SERVICE_ACCOUNT_USER, terminalsHandedOver, watchSession } from "./checks.ts";
import { diagnoseFailures } from "./diagnostics.ts";
import { enforceNetworkPolicy, isolationHolds } from "./isolation.ts";
import { helmInstall, importRunnerImage, readyRunner, RUNNER_REPOSITORY, runnerPods, servedThroughService, serviceUrl, tagImage, uninstall, type RunnerPod } from "./install.ts";
import { acrossReplacement, manyLiveSessions } from "./operations.ts";

describe("the runner installed with helm install", () => {
  diagnoseFailures();
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
    const sessionId = await runSessionWithTerminal(client, SELF_URL);
    await metricsServed(baseUrl);
    await terminalsHandedOver(baseUrl);
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
    await tagImage(ref, `${RUNNER_REPOSITORY}:helm-2`);
    const replaced = await acrossReplacement({ client, baseUrl, oldPod: pod.name, ref: `${RUNNER_REPOSITORY}:helm-2`, replace: () => helmInstall("helm-2", "upgrade") });
    console.log(`[in-cluster] helm upgrade: /v1/ready failed through the Service for ${replaced.gapSeconds.toFixed(1)} s`);
    pod = replaced.pod;
  }, 300_000);

  it("holds 50 live sessions under the shipped memory limits, no container OOM-killed", async () => {
    // Room for 50 sessions on a two-core node: the session cap and quota raised, the app
    // ceilings lowered; the runner's own containers keep the chart's limits.
    await helmInstall("helm-2", "upgrade", { env: { RUNNER_MAX_SESSIONS: "60", RUNNER_APP_MAX_CPU: "10m", RUNNER_APP_MAX_MEMORY: "32Mi" }, quota: { pods: "64" } });
    pod = await waitFor("the reconfigured runner", async () => {
      const [current] = await runnerPods();
      return current && current.name !== pod.name ? readyRunner(`${RUNNER_REPOSITORY}:helm-2`) : undefined;
    }, 240_000);
    await servedThroughService(baseUrl);
    const memory = await manyLiveSessions(client, pod, 50);
    console.log(`[in-cluster] 50 live sessions, peak memory per container: ${JSON.stringify(memory)}`);
    expect(Object.keys(memory).sort()).toEqual(["api", "supervisor"]);
  }, 600_000);
});
