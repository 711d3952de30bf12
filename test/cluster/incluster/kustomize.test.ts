/**
 * The runner in the cluster from `kubectl apply -k`: its image imported into the node, an overlay
 * over k8s/base changing only image references, both containers Ready through their probes
 * under the read-only root filesystem and the shipped limits, and reached through its Service.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { RunnerClient } from "../../../src/client/index.ts";
import { eventsUntil, isStatus } from "../../support/streams.ts";
import { callsFromPod, metricsServed, runSessionWithTerminal, SERVICE_ACCOUNT_USER } from "./checks.ts";
import { diagnoseFailures } from "./diagnostics.ts";
import { enforceNetworkPolicy, isolationHolds } from "./isolation.ts";
import { acrossReplacement, supervisorKilled } from "./operations.ts";
import { kubectl } from "../pods.ts";
import { RUNNER_NAMESPACE } from "../fixture/cluster.ts";
import { applyOverlay, importRunnerImage, readyRunner, serviceUrl, uninstall, type RunnerPod } from "./install.ts";

describe("the runner installed with kubectl apply -k", () => {
  diagnoseFailures();
  let overlay: string;
  let pod: RunnerPod;
  let client: RunnerClient;
  let baseUrl: string;

  beforeAll(async () => {
    // Enforced before the install, so every check below also runs under the shipped NetworkPolicy.
    await enforceNetworkPolicy();
    const image = await importRunnerImage("kustomize");
    overlay = await applyOverlay("kustomize");
    pod = await readyRunner(image.ref);
    baseUrl = await serviceUrl("http");
    client = new RunnerClient(baseUrl);
  }, 600_000);

  afterAll(async () => {
    if (overlay) await uninstall({ overlay });
  }, 240_000);

  it("runs both containers from the imported image, Ready, without a restart", () => {
    expect(pod.restarts).toEqual({ api: 0, supervisor: 0 });
  });

  it("answers /v1/ready through its Service", async () => {
    expect((await fetch(`${baseUrl}/v1/ready`)).status).toBe(200);
  });

  it("runs a session whose pod fetched its bundle from its own replica's listener (RUNNER_SELF_URL), with its terminal, and serves /metrics", async () => {
    const sessionId = await runSessionWithTerminal(client, `http://${pod.ip}:8063`);
    await metricsServed(baseUrl);
    await client.deleteSession(sessionId);
    await eventsUntil(client, sessionId, isStatus("stopped"));
  });

  it("fences its session pods by the NetworkPolicy, enforced", async () => {
    await isolationHolds(client);
  }, 240_000);

  it("calls the apiserver only as its ServiceAccount, from its pod, never refused", async () => {
    const calls = await callsFromPod(pod.ip);
    expect(calls.calls).toBeGreaterThan(0);
    expect(calls.users).toEqual([SERVICE_ACCOUNT_USER]);
    expect(calls.forbidden).toEqual([]);
  });

  it("keeps a live session across kubectl rollout restart: same id, events resumed, terminal reattached", async () => {
    const replaced = await acrossReplacement({ client, baseUrl, oldPod: pod.name, ref: pod.images.api!, replace: async () => void (await kubectl(["-n", RUNNER_NAMESPACE, "rollout", "restart", "deployment/telo-k8s-runner"])) });
    console.log(`[in-cluster] kubectl rollout restart: /v1/ready failed through the Service for ${replaced.gapSeconds.toFixed(1)} s`);
    pod = replaced.pod;
  }, 300_000);

  it("recovers from its supervisor container killed: NotReady through /v1/ready, restarted, the session re-adopted, Ready", async () => {
    const seconds = await supervisorKilled(client, baseUrl, pod);
    console.log(`[in-cluster] supervisor container SIGKILLed: Ready again after ${seconds.toFixed(1)} s`);
  }, 240_000);
});
