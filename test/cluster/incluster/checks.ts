/**
 * What the tier proves of the runner running in the cluster, whichever way it was installed:
 * a run session with its terminal whose bundle the pod fetched through RUNNER_SELF_URL by the
 * Service's DNS name, /metrics, and every apiserver call made from the runner pod as its
 * ServiceAccount with none refused; with the features the helm install turns on, a watch session
 * with its workspace, a predefined app, a warm pool claim and the console's API.
 */
import { readFile } from "node:fs/promises";
import { expect, inject } from "vitest";
import type { RunnerClient } from "../../../src/client/index.ts";
import { kubeSessionBody, SESSION_NAMESPACE } from "../../support/kube-runner.ts";
import { scrape, valueOf } from "../../support/metrics.ts";
import { eventsOf, eventsUntil, framesUntilText, isStatus, textOf } from "../../support/streams.ts";
import { waitFor } from "../../support/wait.ts";
import { RUNNER_NAMESPACE, RUNNER_SERVICE_ACCOUNT } from "../fixture/cluster.ts";
import { kubectl } from "../pods.ts";

/**
 * The URL the chart's single-replica install gives: the Service's name, resolved by the
 * cluster's DNS. With the replicas' settings (k8s/base) each pod gives its own IP instead.
 */
export const SELF_URL = "http://telo-k8s-runner.telo-runner.svc:8063";

type PodJson = { metadata: { name: string; labels?: Record<string, string> }; spec: { initContainers?: PodContainer[]; containers: PodContainer[] } };
type PodContainer = { env?: Array<{ name: string; value?: string }> };

async function sessionPod(sessionId: string): Promise<PodJson> {
  const list = JSON.parse(await kubectl(["-n", SESSION_NAMESPACE, "get", "pods", "-l", `telo.run/session-id=${sessionId}`, "-o", "json"])) as { items: PodJson[] };
  expect(list.items.length).toBe(1);
  return list.items[0]!;
}

/** Types into the session's terminal and sees the echo. */
async function echoes(client: RunnerClient, sessionId: string, text: string, app?: string): Promise<void> {
  const terminal = client.terminal(sessionId, app ? { app } : {});
  await terminal.send(`${text}\r`);
  expect(textOf(await framesUntilText(terminal, text))).toContain(text);
  terminal.close();
}

async function stop(client: RunnerClient, sessionId: string): Promise<void> {
  await client.deleteSession(sessionId);
  expect(eventsOf(await eventsUntil(client, sessionId)).at(-1)).toEqual({ type: "status", status: { kind: "stopped" } });
}

/** A cold run session: the pod's init container fetched its bundle from `selfUrl` (RUNNER_SELF_URL). */
export async function runSessionWithTerminal(client: RunnerClient, selfUrl: string): Promise<string> {
  const { sessionId } = await client.createSession(kubeSessionBody({ output: "in the cluster\r\n" }));
  await eventsUntil(client, sessionId, isStatus("running"));
  const pod = await sessionPod(sessionId);
  // A cold pod's init container fetches the bundle from ARCHIVE_URL; a warm pool pod's shell
  // long-polls CLAIM_URL for its claim, which fetches the bundle from the same listener. The pod
  // is running, so it did.
  const env = [...(pod.spec.initContainers ?? []), ...pod.spec.containers].flatMap((c) => c.env ?? []);
  const urls = env.filter((e) => e.name === "ARCHIVE_URL" || e.name === "CLAIM_URL").map((e) => e.value ?? "");
  expect(urls.length).toBe(1);
  expect(urls[0]!.startsWith(`${selfUrl}/`)).toBe(true);
  await echoes(client, sessionId, "typed in the cluster");
  return sessionId;
}

/**
 * The runner's terminals reached its supervisor as handed sockets, not through the api (docs/relay.md
 * "The handoff"): the two containers opened the handle channel over their shared volume. One
 * replica: every terminal's session is its own.
 */
export async function terminalsHandedOver(baseUrl: string): Promise<void> {
  const samples = await scrape(baseUrl);
  expect(valueOf(samples, "runner_terminals_opened_total", { path: "handed" })).toBeGreaterThan(0);
  expect(valueOf(samples, "runner_terminals_opened_total", { path: "spliced" })).toBe(0);
}

export async function metricsServed(baseUrl: string): Promise<void> {
  const metrics = await fetch(`${baseUrl}/metrics`);
  expect(metrics.status).toBe(200);
  expect(await metrics.text()).toMatch(/^# (HELP|TYPE) /m);
}

export async function consoleLists(baseUrl: string, sessionId: string): Promise<void> {
  const list = await fetch(`${baseUrl}/console/api/sessions`);
  expect(list.status).toBe(200);
  const body = (await list.json()) as { sessions: Array<{ sessionId: string }> };
  expect(body.sessions.map((s) => s.sessionId)).toContain(sessionId);
}

const WEB = "web/telo.yaml";

/** A watch session: its pod up, the workspace seeded and served, a write read back, then stopped. */
export async function watchSession(client: RunnerClient): Promise<void> {
  const { sessionId } = await client.createSession(
    kubeSessionBody(
      {},
      {
        mode: "watch",
        apps: [{ name: "web", entryRelativePath: WEB, ports: [], io: "tty" }],
        bundle: { entryRelativePath: WEB, files: [{ relativePath: WEB, contents: "kind: Telo.Application\nmetadata: { name: web }\n" }] },
      },
    ),
  );
  await eventsUntil(client, sessionId, (event) => event.type === "run" && event.app === "web" && event.phase === "started");
  // The terminal before the write: a write reloads the app, which starts its kernel afresh.
  await echoes(client, sessionId, "typed to the app", "web");
  expect((await client.workspaceTree(sessionId)).files.map((file) => file.path)).toContain(WEB);
  expect(await client.applyWorkspace(sessionId, { write: [{ path: "notes.md", content: "in the cluster" }] })).toEqual({ written: 1, deleted: 0 });
  expect(await client.workspaceFile(sessionId, "notes.md")).toEqual({ content: "in the cluster", size: 14 });
  await stop(client, sessionId);
}

/** The catalog's `echo` app by its own entrypoint. */
export async function appSession(client: RunnerClient): Promise<void> {
  const { sessionId } = await client.createAppSession("echo");
  await eventsUntil(client, sessionId, isStatus("running"));
  await echoes(client, sessionId, "hello app");
  await stop(client, sessionId);
}

/** A session served by the warm pool: a ready pool pod, claimed, its terminal echoing. */
export async function poolClaim(client: RunnerClient, baseUrl: string): Promise<void> {
  await waitFor("a ready pool pod", async () => valueOf(await scrape(baseUrl), "runner_warm_pool_pods", { state: "ready" }) === 1 || undefined, 90_000);
  const { sessionId } = await client.createSession(kubeSessionBody());
  await eventsUntil(client, sessionId, isStatus("running"));
  expect((await sessionPod(sessionId)).metadata.name).toMatch(/^telo-pool-/);
  await echoes(client, sessionId, "hello warm pod");
  await stop(client, sessionId);
}

type AuditLine = { user: { username: string }; sourceIPs?: string[]; responseStatus?: { code?: number }; verb: string; requestURI: string };

/** The audit log's calls from `podIp`: all as the runner's ServiceAccount, none answered 403. */
export async function callsFromPod(podIp: string): Promise<{ users: string[]; forbidden: string[]; calls: number }> {
  const lines = (await readFile(inject("realCluster").auditLog, "utf8")).split("\n").filter(Boolean);
  const fromPod = lines.map((line) => JSON.parse(line) as AuditLine).filter((event) => event.sourceIPs?.[0] === podIp);
  return {
    users: [...new Set(fromPod.map((event) => event.user.username))],
    forbidden: fromPod.filter((event) => event.responseStatus?.code === 403).map((event) => `${event.verb} ${event.requestURI}`),
    calls: fromPod.length,
  };
}

export const SERVICE_ACCOUNT_USER = `system:serviceaccount:${RUNNER_NAMESPACE}:${RUNNER_SERVICE_ACCOUNT}`;
