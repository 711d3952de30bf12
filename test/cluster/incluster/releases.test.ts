/**
 * Two releases of k8s/chart side by side, as an operator runs a staging runner beside
 * production: `helm install <name> k8s/chart -n <namespace> --create-namespace` each, with the
 * chart's own defaults for names, the session namespace (<fullname>-sessions) and the owner
 * identity. Each runs a session through its own Service in its own session namespace; a restart
 * of one runner (its boot adoption and reaping) leaves the other's session pod alone, and the
 * audit log shows neither ever called into the other's namespaces. The staging release sets
 * RUNNER_SELF_URL in values, and its session pods fetch their bundle from that URL. `helm test`
 * passes for both, and an install with values the schema refuses creates nothing.
 *
 * Then the session NetworkPolicy's node and control-plane ranges. The tier's node address
 * (10.244.0.1) is private, already blocked; a cluster whose nodes and apiserver have addresses
 * outside the private ranges is made here by giving the machine two more, 198.51.100.1 (a
 * node address: the apiserver's and the kubelet's ports) and 198.51.100.2 (a control-plane
 * endpoint: the apiserver on 443), on the loopback interface (this kernel has no dummy
 * interfaces; a local address answers whichever interface a packet came in on), each port a TCP forwarder of this
 * process to the real listener on 10.244.0.1, and a route to them in the dialling pods. A
 * session pod reaches them under the chart's defaults (the issue), and is refused once
 * networkPolicy.nodeCIDRs and controlPlaneCIDRs name them; a pod no policy selects reaches them
 * throughout.
 */
import { execFile } from "node:child_process";
import { mkdir, readFile, writeFile } from "node:fs/promises";
import { connect, createServer, type Server } from "node:net";
import { join } from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { RunnerClient } from "../../../src/client/index.ts";
import { REPO_ROOT } from "../../deploy/render.ts";
import { kubeSessionBody } from "../../support/kube-runner.ts";
import { eventsUntil, framesUntilText, isStatus, textOf } from "../../support/streams.ts";
import { waitFor } from "../../support/wait.ts";
import { NODE_PORTS } from "../fixture/cluster.ts";
import { firewallCovers } from "../fixture/network-policy.ts";
import { applyObjects, deleteNamespace, dnsKnows, execIn, kubectl, makeNamespace, readyPodIp, shellPod } from "../pods.ts";
import { diagnoseFailures } from "./diagnostics.ts";
import { helm, importRunnerImage, RUNNER_REPOSITORY, servedThroughService } from "./install.ts";
import { enforceNetworkPolicy } from "./isolation.ts";

const run = promisify(execFile);

type Release = { name: string; namespace: string; fullname: string; sessions: string; owner: string; selfUrl: string; env: Record<string, string> };

const PROD: Release = {
  name: "prod",
  namespace: "telo-prod",
  fullname: "prod-telo-k8s-runner",
  sessions: "prod-telo-k8s-runner-sessions",
  owner: "telo-prod.prod",
  // The chart's default with one replica: the release's Service by name.
  selfUrl: "http://prod-telo-k8s-runner.telo-prod.svc:8063",
  env: {},
};
// RUNNER_SELF_URL from values: the same Service by its fully qualified name, which the
// default never gives, so the URL the session pod fetched from says which one won.
const STAGING_SELF_URL = "http://staging-telo-k8s-runner.telo-staging.svc.cluster.local:8063";
const STAGING: Release = {
  name: "staging",
  namespace: "telo-staging",
  fullname: "staging-telo-k8s-runner",
  sessions: "staging-telo-k8s-runner-sessions",
  owner: "telo-staging.staging",
  selfUrl: STAGING_SELF_URL,
  env: { RUNNER_SELF_URL: STAGING_SELF_URL },
};

const NODE_ADDRESS = "198.51.100.1";
const CONTROL_PLANE_ADDRESS = "198.51.100.2";
const OUTSIDER_NAMESPACE = "k8s-runner-releases-outsider";

async function install(release: Release, tag: string, verb: "install" | "upgrade", networkPolicy?: object): Promise<void> {
  const real = inject("realCluster");
  const values = join(REPO_ROOT, ".tmp", "incluster", `values-${release.name}.json`);
  await writeFile(
    values,
    JSON.stringify({
      replicas: 1,
      image: { repository: RUNNER_REPOSITORY, tag },
      env: { RUNNER_INIT_IMAGE: real.initImage, ...release.env },
      ...(networkPolicy ? { networkPolicy } : {}),
    }),
  );
  await helm([verb, release.name, "k8s/chart", "--namespace", release.namespace, ...(verb === "install" ? ["--create-namespace"] : []), "-f", values]);
}

/** The release's one runner pod, Ready; its name. */
async function readyRunner(release: Release): Promise<string> {
  return waitFor(`the runner pod of ${release.name} to be Ready`, async () => {
    const list = JSON.parse(await kubectl(["-n", release.namespace, "get", "pods", "-l", `app.kubernetes.io/instance=${release.name},app.kubernetes.io/name=telo-k8s-runner`, "-o", "json"])) as {
      items: Array<{ metadata: { name: string; deletionTimestamp?: string }; status: { conditions?: Array<{ type: string; status: string }> } }>;
    };
    const live = list.items.filter((pod) => !pod.metadata.deletionTimestamp);
    return live.length === 1 && live[0]!.status.conditions?.some((c) => c.type === "Ready" && c.status === "True") ? live[0]!.metadata.name : undefined;
  }, 240_000);
}

/** The release's Service URL for /v1, once the cluster DNS knows its name and it serves. */
async function serviceUrlOf(release: Release): Promise<string> {
  const ip = (await kubectl(["-n", release.namespace, "get", "service", release.fullname, "-o", "jsonpath={.spec.clusterIP}"])).trim();
  await dnsKnows(`${release.fullname}.${release.namespace}.svc.cluster.local`, ip);
  const baseUrl = `http://${ip}:8062`;
  await servedThroughService(baseUrl);
  return baseUrl;
}

type SessionPod = { metadata: { name: string; uid: string; namespace: string; labels: Record<string, string> }; spec: { initContainers?: Array<{ env?: Array<{ name: string; value?: string }> }> }; status: { podIP?: string } };

/** The session's pods in every namespace: the test asserts where they are. */
async function podsOf(sessionId: string): Promise<SessionPod[]> {
  return (JSON.parse(await kubectl(["get", "pods", "-A", "-l", `telo.run/session-id=${sessionId}`, "-o", "json"])) as { items: SessionPod[] }).items;
}

/** The containerd task's PID of a pod's container, whose network namespace is the pod's. */
async function podPid(namespace: string, pod: string, container: string): Promise<string> {
  const id = (await kubectl(["-n", namespace, "get", "pod", pod, "-o", `jsonpath={.status.containerStatuses[?(@.name=="${container}")].containerID}`])).trim().replace(/^containerd:\/\//, "");
  const { stdout } = await run("ctr", [`--address=${inject("realCluster").containerdSocket}`, "--namespace=k8s.io", "tasks", "ls"]);
  const line = stdout.split("\n").find((l) => l.startsWith(`${id} `));
  if (!line) throw new Error(`no containerd task for ${namespace}/${pod} ${container} (${id})`);
  return line.split(/\s+/)[1]!;
}

/** A route in the pod's network namespace to the public addresses, through the node: pods here have no default route. */
async function routePublicAddresses(namespace: string, pod: string, container: string, gateway: string): Promise<void> {
  await run("nsenter", ["-t", await podPid(namespace, pod, container), "-n", "ip", "route", "replace", "198.51.100.0/24", "via", gateway]);
}

/** A TCP forwarder on `host:port` to the real listener, so the node answers there as it does on its own address. */
function forward(host: string, port: number, to: { host: string; port: number }): Promise<Server> {
  const server = createServer((socket) => {
    const upstream = connect(to.port, to.host);
    socket.pipe(upstream).pipe(socket);
    socket.on("error", () => upstream.destroy());
    upstream.on("error", () => socket.destroy());
  });
  return new Promise((resolve, reject) => {
    server.once("error", reject);
    server.listen({ host, port }, () => resolve(server));
  });
}

type Targets = Record<string, { host: string; port: number }>;

/** Each target dialled from the pod (TCP connect, 2 s): reached or refused. */
async function dial(namespace: string, pod: string, container: string, targets: Targets): Promise<Record<string, string>> {
  const script = [...Object.entries(targets).map(([name, t]) => `( timeout 5 nc -w 2 ${t.host} ${t.port} </dev/null >/dev/null 2>&1; echo "${name} $?" ) &`), "wait"].join("\n");
  const { out } = await execIn(namespace, pod, container, script);
  const results = Object.fromEntries(out.split("\n").flatMap((line) => (/^\S+ \d+$/.test(line) ? [[line.split(" ")[0]!, line.endsWith(" 0") ? "reached" : "refused"]] : [])));
  expect(Object.keys(results).sort()).toEqual(Object.keys(targets).sort());
  return results;
}

const every = (targets: Targets, outcome: string) => Object.fromEntries(Object.keys(targets).map((name) => [name, outcome]));

describe("two releases of the chart side by side, and the node and control-plane ranges", () => {
  diagnoseFailures();
  let tag: string;
  const urls = new Map<string, string>();
  const client = (release: Release) => new RunnerClient(urls.get(release.name)!);
  const sessions = new Map<string, string>();
  const forwarders: Server[] = [];
  const added: string[] = [];

  beforeAll(async () => {
    await enforceNetworkPolicy();
    tag = "releases";
    await mkdir(join(REPO_ROOT, ".tmp", "incluster"), { recursive: true });
    await importRunnerImage(tag);
    for (const release of [PROD, STAGING]) await install(release, tag, "install");
    for (const release of [PROD, STAGING]) {
      await readyRunner(release);
      urls.set(release.name, await serviceUrlOf(release));
    }
  }, 600_000);

  afterAll(async () => {
    for (const server of forwarders) server.close();
    for (const address of added) await run("ip", ["addr", "del", `${address}/32`, "dev", "lo"]).catch(() => undefined);
    await deleteNamespace(OUTSIDER_NAMESPACE).catch(() => undefined);
    for (const release of [PROD, STAGING]) {
      // The runner first, so nothing it calls is refused while its bindings go.
      await kubectl(["-n", release.namespace, "scale", `deployment/${release.fullname}`, "--replicas=0"]).catch(() => undefined);
      await helm(["uninstall", release.name, "--namespace", release.namespace, "--wait"]).catch(() => undefined);
      await deleteNamespace(release.namespace);
    }
  }, 300_000);

  it("runs a session per release in its own session namespace, owned by its own identity, its bundle fetched from its RUNNER_SELF_URL", async () => {
    for (const release of [PROD, STAGING]) {
      const runner = client(release);
      const { sessionId } = await runner.createSession(kubeSessionBody({ output: `${release.name}\r\n` }));
      await eventsUntil(runner, sessionId, isStatus("running"));
      sessions.set(release.name, sessionId);
      const pods = await podsOf(sessionId);
      expect(pods.map((pod) => pod.metadata.namespace)).toEqual([release.sessions]);
      expect(pods[0]!.metadata.labels["telo.run/owner"]).toBe(release.owner);
      const urls = (pods[0]!.spec.initContainers ?? []).flatMap((c) => c.env ?? []).filter((e) => e.name === "ARCHIVE_URL").map((e) => e.value ?? "");
      expect(urls.length).toBe(1);
      expect(urls[0]!.startsWith(`${release.selfUrl}/`), urls[0]).toBe(true);
      const terminal = runner.terminal(sessionId);
      await terminal.send(`typed in ${release.name}\r`);
      expect(textOf(await framesUntilText(terminal, `typed in ${release.name}`))).toContain(`typed in ${release.name}`);
      terminal.close();
    }
    // Each runner knows only its own session.
    for (const [release, other] of [[PROD, STAGING], [STAGING, PROD]] as const) {
      expect((await fetch(`${urls.get(release.name)}/v1/sessions/${sessions.get(other.name)}`)).status).toBe(404);
    }
  }, 240_000);

  it("restarts one runner without touching the other's session pod, and neither calls into the other's namespaces", async () => {
    const [prodSession, stagingSession] = [sessions.get(PROD.name)!, sessions.get(STAGING.name)!];
    const prodPodBefore = (await podsOf(prodSession))[0]!;
    const stagingRunner = await readyRunner(STAGING);
    await kubectl(["-n", STAGING.namespace, "delete", "pod", stagingRunner, "--wait=true"]);
    const restarted = await readyRunner(STAGING);
    expect(restarted).not.toBe(stagingRunner);
    await serviceUrlOf(STAGING);
    // The restarted runner re-adopted its own session and left prod's pod as it was.
    await eventsUntil(client(STAGING), stagingSession, isStatus("running"));
    const prodPodAfter = (await podsOf(prodSession))[0]!;
    expect(prodPodAfter.metadata.uid).toBe(prodPodBefore.metadata.uid);
    await eventsUntil(client(PROD), prodSession, isStatus("running"));

    type AuditLine = { user: { username: string }; requestURI: string; responseStatus?: { code?: number } };
    const lines = (await readFile(inject("realCluster").auditLog, "utf8")).split("\n").filter(Boolean).map((line) => JSON.parse(line) as AuditLine);
    for (const release of [PROD, STAGING]) {
      const calls = lines.filter((line) => line.user.username === `system:serviceaccount:${release.namespace}:${release.fullname}`);
      expect(calls.length, release.name).toBeGreaterThan(0);
      const namespaces = new Set(calls.flatMap((line) => /\/namespaces\/([^/?]+)\//.exec(line.requestURI)?.[1] ?? []));
      expect([...namespaces].filter((ns) => ns !== release.sessions && ns !== release.namespace), release.name).toEqual([]);
      expect(calls.filter((line) => line.responseStatus?.code === 403).map((line) => line.requestURI), release.name).toEqual([]);
    }
  }, 300_000);

  it("passes helm test for each release: its Service answers /v1/ready", async () => {
    for (const release of [PROD, STAGING]) {
      // A failed test pod stays (the hook deletes it on success only): its log says why.
      const out = await helm(["test", release.name, "--namespace", release.namespace, "--timeout", "120s"]).catch(async (error: { message: string; stdout?: string }) => {
        const log = await kubectl(["-n", release.namespace, "logs", `${release.fullname}-test-ready`]).catch((e: Error) => e.message);
        throw new Error(`${error.message}\n${error.stdout ?? ""}\ntest pod log:\n${log}`);
      });
      expect(out, release.name).toMatch(new RegExp(`TEST SUITE:\\s+${release.fullname}-test-ready[\\s\\S]*Phase:\\s+Succeeded`));
    }
  }, 300_000);

  it("refuses values that fail the schema at helm install, before anything is created", async () => {
    const refusal = await helm(["install", "bad", "k8s/chart", "--namespace", PROD.namespace, "--set", "networkPolicy.nodeCIDRs={198.51.100.1}"]).then(
      () => "installed",
      (error: { stderr?: string }) => error.stderr ?? String(error),
    );
    expect(refusal).toMatch(/values don't meet the specifications of the schema/);
    expect(await helm(["list", "--all", "--namespace", PROD.namespace, "-q"])).not.toMatch(/^bad$/m);
  });

  it("refuses a session pod the node and control-plane addresses outside the private ranges once the chart is given them", async () => {
    const real = inject("realCluster");
    for (const address of [NODE_ADDRESS, CONTROL_PLANE_ADDRESS]) {
      await run("ip", ["addr", "add", `${address}/32`, "dev", "lo"]);
      added.push(address);
    }
    const apiserver = { host: real.hostAddress, port: NODE_PORTS.apiserver };
    forwarders.push(
      await forward(NODE_ADDRESS, NODE_PORTS.apiserver, apiserver),
      await forward(NODE_ADDRESS, NODE_PORTS.kubelet, { host: real.hostAddress, port: NODE_PORTS.kubelet }),
      await forward(CONTROL_PLANE_ADDRESS, 443, apiserver),
    );

    const session = (await podsOf(sessions.get(PROD.name)!))[0]!;
    await makeNamespace(OUTSIDER_NAMESPACE);
    await applyObjects([shellPod({ name: "outsider", namespace: OUTSIDER_NAMESPACE, script: "exec sleep 3600" })]);
    await readyPodIp(OUTSIDER_NAMESPACE, "outsider");
    for (const [namespace, pod] of [[PROD.sessions, session.metadata.name], [OUTSIDER_NAMESPACE, "outsider"]] as const) {
      await waitFor(`kube-router's firewall for ${namespace}/${pod}`, () => firewallCovers(namespace, pod), 60_000);
    }
    await routePublicAddresses(PROD.sessions, session.metadata.name, "session", real.hostAddress);
    await routePublicAddresses(OUTSIDER_NAMESPACE, "outsider", "main", real.hostAddress);
    // A Service in front of the public control-plane address, as the `kubernetes` Service is in
    // front of a managed control plane's endpoint: a ClusterIP (private) the node's proxy
    // translates to the public address before the policy judges the connection.
    await applyObjects([
      { apiVersion: "v1", kind: "Service", metadata: { name: "public-apiserver", namespace: OUTSIDER_NAMESPACE }, spec: { ports: [{ name: "https", port: 443, protocol: "TCP" }] } },
      {
        apiVersion: "discovery.k8s.io/v1",
        kind: "EndpointSlice",
        metadata: { name: "public-apiserver", namespace: OUTSIDER_NAMESPACE, labels: { "kubernetes.io/service-name": "public-apiserver" } },
        addressType: "IPv4",
        endpoints: [{ addresses: [CONTROL_PLANE_ADDRESS] }],
        ports: [{ name: "https", port: 443, protocol: "TCP" }],
      },
    ]);
    const clusterIp = (await kubectl(["-n", OUTSIDER_NAMESPACE, "get", "service", "public-apiserver", "-o", "jsonpath={.spec.clusterIP}"])).trim();
    const targets: Targets = {
      "apiserver-on-public-node-address": { host: NODE_ADDRESS, port: NODE_PORTS.apiserver },
      "kubelet-on-public-node-address": { host: NODE_ADDRESS, port: NODE_PORTS.kubelet },
      "apiserver-public-endpoint": { host: CONTROL_PLANE_ADDRESS, port: 443 },
      "apiserver-public-endpoint-by-service": { host: clusterIp, port: 443 },
    };

    // The chart's defaults: the public addresses are outside every blocked range (the issue).
    // The Service's proxy rules may lag its creation: wait for the pod no policy selects first.
    await waitFor("the node's proxy to route public-apiserver", async () => (await dial(OUTSIDER_NAMESPACE, "outsider", "main", targets))["apiserver-public-endpoint-by-service"] === "reached" || undefined, 60_000);
    expect(await dial(PROD.sessions, session.metadata.name, "session", targets)).toEqual(every(targets, "reached"));
    expect(await dial(OUTSIDER_NAMESPACE, "outsider", "main", targets)).toEqual(every(targets, "reached"));

    // Given the ranges, the policy alone changes (the runner pod and the session stay).
    await install(PROD, tag, "upgrade", { nodeCIDRs: [`${NODE_ADDRESS}/32`], controlPlaneCIDRs: [`${CONTROL_PLANE_ADDRESS}/32`] });
    const except = JSON.parse(await kubectl(["-n", PROD.sessions, "get", "networkpolicy", `${PROD.fullname}-sessions`, "-o", "jsonpath={.spec.egress[2].to[0].ipBlock.except}"])) as string[];
    expect(except).toEqual(expect.arrayContaining([`${NODE_ADDRESS}/32`, `${CONTROL_PLANE_ADDRESS}/32`]));
    await waitFor("kube-router to refuse the public addresses to the session pod", async () => {
      const outcome = await dial(PROD.sessions, session.metadata.name, "session", targets);
      return Object.values(outcome).every((o) => o === "refused") || undefined;
    }, 90_000);
    expect(await dial(PROD.sessions, session.metadata.name, "session", targets)).toEqual(every(targets, "refused"));
    expect(await dial(OUTSIDER_NAMESPACE, "outsider", "main", targets)).toEqual(every(targets, "reached"));
    expect((await podsOf(sessions.get(PROD.name)!))[0]!.metadata.uid).toBe(session.metadata.uid);
  }, 300_000);
});
