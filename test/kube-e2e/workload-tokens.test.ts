/**
 * Workload tokens (docs/events-and-tokens.md "Workload tokens") through the runner's two
 * processes on both clusters: a catalog app or agent naming a `tokenEnv` gets a fresh token per
 * session, in its container's env through its pod's Secret, and on its endpoints; never as a
 * plain value in the pod, in the pod's record or in any log line. The Secret is owned by its pod
 * and goes with it; a re-adopted session reads its token back; an unowned Secret no pod reads is
 * swept at boot; a token'd session never takes a warm pool pod. Runs in `npm test` and in `npm run test:cluster`, where these are the calls that
 * use the runner's `secrets` grants (test/cluster/rbac-audit.test.ts).
 */
import { Writable } from "node:stream";
import { Exec, type KubeConfig, type V1Pod, type V1Secret } from "@kubernetes/client-node";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { RunnerEndpoint, RunStatus } from "../../src/contract/wire.ts";
import { scrape, valueOf } from "../support/metrics.ts";
import { waitFor } from "../support/wait.ts";
import { type ClusterRunner, ON_REAL_CLUSTER, SESSION_NAMESPACE, kubeSessionBody, startClusterRunner } from "../support/kube-runner.ts";
import { eventsOf, eventsUntil, isStatus } from "../support/streams.ts";

const TOKEN = /^[a-z2-7]{32}$/;
// A real pod (and the garbage collector after it) takes seconds to go.
const GONE_MS = 60_000;
const WEB = "web/telo.yaml";

/** The container's environment as its process sees it (`env` run in it). */
async function containerEnv(kubeConfig: KubeConfig, pod: string, container: string): Promise<Record<string, string>> {
  let out = "";
  const sink = new Writable({ write: (chunk: Buffer, _encoding, done) => ((out += chunk.toString()), done()) });
  await new Promise<void>((resolve, reject) => {
    new Exec(kubeConfig).exec(SESSION_NAMESPACE, pod, container, ["env"], sink, null, null, false, () => resolve()).catch(reject);
  });
  return Object.fromEntries(out.split("\n").filter((line) => line.includes("=")).map((line) => [line.slice(0, line.indexOf("=")), line.slice(line.indexOf("=") + 1)]));
}

const runningOf = async (runner: ClusterRunner, sessionId: string): Promise<Extract<RunStatus, { kind: "running" }>> => {
  const last = eventsOf(await eventsUntil(runner.client, sessionId, isStatus("running"))).at(-1);
  if (last?.type !== "status" || last.status.kind !== "running") throw new Error("no running status");
  return last.status;
};

describe(`workload tokens on the ${ON_REAL_CLUSTER ? "real" : "simulated"} cluster`, () => {
  let runner: ClusterRunner;
  const secretsOf = async (sessionId: string): Promise<V1Secret[]> =>
    (await runner.core.listNamespacedSecret({ namespace: SESSION_NAMESPACE, labelSelector: `telo.run/session-id=${sessionId}` })).items;
  const readPod = (name: string): Promise<V1Pod> => runner.core.readNamespacedPod({ name, namespace: SESSION_NAMESPACE });
  const stopAndWaitGone = async (sessionId: string) => {
    await runner.client.deleteSession(sessionId);
    await eventsUntil(runner.client, sessionId);
    await waitFor("the session's pods and token Secrets to be gone", async () => {
      const pods = (await runner.sessionPods()).filter((name) => name.includes(sessionId));
      return (pods.length === 0 && (await secretsOf(sessionId)).length === 0) || undefined;
    }, GONE_MS);
  };

  beforeAll(async () => {
    // The kernel image; its entrypoint without arguments is an echoing app (both clusters).
    const image = kubeSessionBody().config?.image ?? "";
    runner = await startClusterRunner({
      env: {
        // Every line, so that "never logged" covers the debug ones too.
        LOG_LEVEL: "debug",
        RUNNER_WATCH_SESSIONS: "true",
        RUNNER_APPS: JSON.stringify({
          echo: { image, pullPolicy: "missing", tokenEnv: "ECHO_TOKEN", env: { PLAIN_SETTING: "plain", ECHO_TOKEN: "not this" } },
          helper: { image, port: 7000, tokenEnv: "AGENT_TOKEN" },
        }),
      },
    });
  });
  afterAll(async () => {
    await runner?.close();
  });

  it("puts an app session's token in its container's env and on its endpoints, through a Secret its pod owns", async () => {
    const { sessionId } = await runner.client.createAppSession("echo", { ports: [{ port: 3000, protocol: "tcp" }] });
    const running = await runningOf(runner, sessionId);
    const token = running.endpoints?.[0]?.token ?? "";
    expect(token).toMatch(TOKEN);
    expect(running.endpoints).toEqual([{ host: "", port: 3000, protocol: "tcp", token }]);
    expect((await runner.client.getSession(sessionId)).status).toEqual(running);

    const podName = `telo-run-${sessionId}`;
    const pod = await readPod(podName);
    const session = pod.spec?.containers.find((container) => container.name === "session");
    expect(session?.env?.filter((variable) => variable.name === "ECHO_TOKEN")).toEqual([
      { name: "ECHO_TOKEN", valueFrom: { secretKeyRef: { name: `${podName}-token`, key: "token" } } },
    ]);
    // Nowhere in the pod: no plain value, not in the record annotation (which lists plain env only).
    expect(JSON.stringify(pod)).not.toContain(token);
    expect(JSON.parse(pod.metadata?.annotations?.["telo.run/session"] ?? "{}").envNames).toEqual(["PLAIN_SETTING"]);

    const [secret] = await secretsOf(sessionId);
    expect(secret?.metadata).toMatchObject({
      name: `${podName}-token`,
      labels: { "telo.run/owner": "default", "telo.run/token": "true", "telo.run/session-id": sessionId },
      ownerReferences: [{ apiVersion: "v1", kind: "Pod", name: podName, uid: pod.metadata?.uid }],
    });
    expect(await containerEnv(runner.kubeConfig, podName, "session")).toMatchObject({ ECHO_TOKEN: token, PLAIN_SETTING: "plain" });

    await stopAndWaitGone(sessionId);
    expect(runner.logs()).toContain("session status");
    expect(runner.logs()).not.toContain(token);
  });

  it("mints a new token for every session", async () => {
    const tokens: string[] = [];
    for (let i = 0; i < 2; i += 1) {
      const { sessionId } = await runner.client.createAppSession("echo", { ports: [{ port: 3000, protocol: "tcp" }] });
      tokens.push((await runningOf(runner, sessionId)).endpoints?.[0]?.token ?? "");
      await stopAndWaitGone(sessionId);
    }
    expect(new Set(tokens).size).toBe(2);
  });

  it("reports the same token after the supervisor restarts, read back from the Secret", async () => {
    const { sessionId } = await runner.client.createAppSession("echo", { ports: [{ port: 3000, protocol: "tcp" }] });
    const token = (await runningOf(runner, sessionId)).endpoints?.[0]?.token;
    await runner.stopSupervisor("SIGKILL");
    await runner.startSupervisor();
    const after = await runner.client.getSession(sessionId);
    expect(after.status).toEqual({ kind: "running", endpoints: [{ host: "", port: 3000, protocol: "tcp", token }] });
    await stopAndWaitGone(sessionId);
    expect(runner.logs()).not.toContain(token);
  });

  it("gives a watch session's agent its token on running.agent, the same on every pod, each pod its own Secret", async () => {
    const { sessionId } = await runner.client.createSession({
      ...kubeSessionBody({}, {
        mode: "watch",
        apps: [{ name: "web", entryRelativePath: WEB, ports: [{ port: 3000, protocol: "tcp" }], io: "tty" }],
        bundle: { entryRelativePath: WEB, files: [{ relativePath: WEB, contents: "kind: Telo.Application\nmetadata: { name: web }\n" }] },
      }),
      agent: "helper",
    });
    const first = await runningOf(runner, sessionId);
    const token = first.agent?.token ?? "";
    expect(token).toMatch(TOKEN);
    expect(first.agent).toEqual({ host: "", port: 7000, protocol: "tcp", token });
    // The apps' endpoints are not the agent's: no token there.
    expect(first.endpoints).toEqual([{ host: "", port: 3000, protocol: "tcp" }]);

    const [firstPod] = (await runner.sessionPods()).filter((name) => name.startsWith(`telo-watch-${sessionId}-`));
    const pod = await readPod(firstPod!);
    expect(JSON.stringify(pod)).not.toContain(token);
    const envOf = (name: string) => pod.spec?.containers.find((container) => container.name === name)?.env ?? [];
    expect(envOf("agent").find((variable) => variable.name === "AGENT_TOKEN")).toEqual({
      name: "AGENT_TOKEN",
      valueFrom: { secretKeyRef: { name: `${firstPod}-token`, key: "token" } },
    });
    expect(envOf("app-web").map((variable) => variable.name)).not.toContain("AGENT_TOKEN");
    // The simulated agent listens on its port and keeps running; the real node's stand-in
    // image, given no stdin, ends at once, so its env cannot be read there.
    if (!ON_REAL_CLUSTER) expect(await containerEnv(runner.kubeConfig, firstPod!, "agent")).toMatchObject({ AGENT_TOKEN: token });

    // A new app set is a new pod: a Secret of its own, the same token, the old pod's Secret gone with it.
    let seen = 0;
    await runner.client.setApps(sessionId, { apps: [{ name: "web", entryRelativePath: WEB, ports: [{ port: 3001, protocol: "tcp" }], io: "tty" }] });
    const events = eventsOf(await eventsUntil(runner.client, sessionId, (event) => isStatus("running")(event) && ++seen >= 2));
    const second = events.at(-1);
    expect(second).toEqual({ type: "status", status: { kind: "running", endpoints: [{ host: "", port: 3001, protocol: "tcp" }], agent: { host: "", port: 7000, protocol: "tcp", token } } });
    await waitFor("one token Secret, the new pod's", async () => {
      const names = (await secretsOf(sessionId)).map((secret) => secret.metadata?.name);
      return (names.length === 1 && names[0] !== `${firstPod}-token`) || undefined;
    }, GONE_MS);
    const endpoints = events.flatMap((event): RunnerEndpoint[] => (event.type === "endpoints" ? (event.added ?? []) : []));
    expect(endpoints.every((endpoint) => endpoint.token === undefined)).toBe(true);

    await stopAndWaitGone(sessionId);
    expect(runner.logs()).not.toContain(token);
  });

  it("sweeps at boot a token Secret of its own that has no owner and that no pod reads, and no other", async () => {
    const secret = (name: string, owner: string): V1Secret => ({
      metadata: { name, labels: { "app.kubernetes.io/managed-by": "telo-k8s-runner", "telo.run/owner": owner, "telo.run/token": "true", "telo.run/session-id": "orphan" } },
      data: { token: Buffer.from("a".repeat(32)).toString("base64") },
    });
    await runner.core.createNamespacedSecret({ namespace: SESSION_NAMESPACE, body: secret("telo-run-orphan-token", "default") });
    await runner.core.createNamespacedSecret({ namespace: SESSION_NAMESPACE, body: secret("telo-run-others-token", "another-runner") });
    await runner.stopSupervisor();
    await runner.startSupervisor();
    const names = (await runner.core.listNamespacedSecret({ namespace: SESSION_NAMESPACE, labelSelector: "telo.run/session-id=orphan" })).items.map((item) => item.metadata?.name);
    expect(names).toEqual(["telo-run-others-token"]);
    await runner.core.deleteNamespacedSecret({ namespace: SESSION_NAMESPACE, name: "telo-run-others-token" });
  });
});

describe(`a token'd session and the warm pool on the ${ON_REAL_CLUSTER ? "real" : "simulated"} cluster`, () => {
  // A real pod takes seconds to pull, copy its shell and start on a busy 2-core machine.
  const READY_MS = ON_REAL_CLUSTER ? 90_000 : 20_000;
  let runner: ClusterRunner;
  beforeAll(async () => {
    const image = kubeSessionBody().config?.image ?? "";
    runner = await startClusterRunner({
      env: { LOG_LEVEL: "debug", RUNNER_WARM_POOL_SIZE: "1", RUNNER_APPS: JSON.stringify({ echo: { image, pullPolicy: "missing", tokenEnv: "ECHO_TOKEN" } }) },
    });
  });
  afterAll(async () => {
    if (!runner) return;
    // Pool pods outlive the supervisor by design: with it stopped nothing refills, and they go before the next file looks.
    await runner.stopSupervisor();
    await runner.core.deleteCollectionNamespacedPod({ namespace: SESSION_NAMESPACE, labelSelector: "telo.run/pool=true", gracePeriodSeconds: 0 });
    await waitFor("the pool pods to be gone", async () => (await runner.sessionPods()).length === 0 || undefined, READY_MS);
    await runner.close();
  });

  it("starts cold beside a ready pool pod, which stays unclaimed", async () => {
    await waitFor("a ready pool pod", async () => valueOf(await scrape(runner.baseUrl), "runner_warm_pool_pods", { state: "ready" }) === 1 || undefined, READY_MS);
    const { sessionId } = await runner.client.createAppSession("echo");
    await eventsUntil(runner.client, sessionId, isStatus("running"));
    expect((await runner.sessionPods()).filter((name) => !name.startsWith("telo-pool-"))).toEqual([`telo-run-${sessionId}`]);
    const figures = await scrape(runner.baseUrl);
    expect(valueOf(figures, "runner_warm_pool_starts_total", { start: "cold" })).toBe(1);
    expect(valueOf(figures, "runner_warm_pool_pods", { state: "ready" })).toBe(1);
    expect(runner.logs()).toContain("a session with a workload token reads it from a Secret its pod names");
    await runner.client.deleteSession(sessionId);
    await eventsUntil(runner.client, sessionId);
  });
});
