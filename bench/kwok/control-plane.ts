/**
 * A real control plane with fake nodes, for the kwok scale section (docs/benchmarks-kwok.md):
 * etcd, kube-apiserver, the few controllers sessions need, the scheduler and kwok, which plays
 * every node's kubelet (it binds nothing, runs nothing, moves each scheduled pod to Running).
 *
 * It shares the real-cluster tier's modules (PKI, kubeconfigs, component processes) but nothing
 * of its machine state: its own ports, its own state directory under /var/tmp (not the tier's
 * prefix, which the tier sweeps), no bridge, no containerd, no lock. Every address it hands out
 * is on loopback: the apiserver, kwok's kubelet endpoint and the fake pods' IPs (each node's
 * podCIDR is a 127.1.x.0/22), so nothing the runner dials leaves the machine.
 */
import { execFile } from "node:child_process";
import { readFileSync, rmSync } from "node:fs";
import { mkdir, mkdtemp, readdir, rm, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { Agent, request } from "undici";
import { RUNNER_NAMESPACE, RUNNER_SERVICE_ACCOUNT, SESSION_NAMESPACE } from "../../test/cluster/fixture/cluster.ts";
import { type Component, isRunning, startComponent, stopComponent, waitUntil } from "../../test/cluster/fixture/components.ts";
import { kubeconfig } from "../../test/cluster/fixture/configs.ts";
import { pidsMentioning } from "../../test/cluster/fixture/machine.ts";
import { type ClientIdentity, makePki, type Pki } from "../../test/cluster/fixture/pki.ts";
import { kwokStagesConfig } from "./stages.ts";
import { controlPlaneBinary } from "./tools.ts";

const run = promisify(execFile);
const REPO_ROOT = fileURLToPath(new URL("../../", import.meta.url));

/** Where this section's state directories live; apart from the tier's /var/tmp/k8s-runner-cluster-*. */
export const KWOK_STATE_PREFIX = "/var/tmp/k8s-runner-kwok-";

/** Fixed ports of this section, none shared with the real-cluster tier's (23791, 26443, 2025x). */
export const KWOK_PORTS = { etcdClient: 24891, etcdPeer: 24892, apiserver: 27443, controllerManager: 21357, scheduler: 21359, kwok: 21347, kubelet: 21348 } as const;

const CLIENTS: ClientIdentity[] = [
  { name: "admin", cn: "k8s-runner-kwok-admin", groups: ["system:masters"] },
  { name: "controller-manager", cn: "system:kube-controller-manager", groups: [] },
  { name: "scheduler", cn: "system:kube-scheduler", groups: [] },
  // kwok writes every fake node's and pod's status: it gets the masters' rights, as its own docs run it.
  { name: "kwok", cn: "kwok-controller", groups: ["system:masters"] },
];

/** Only what the sessions' pods need: service accounts (their admission), namespaces, the GC. */
const CONTROLLERS = [
  "serviceaccount-controller",
  "serviceaccount-token-controller",
  "namespace-controller",
  "garbage-collector-controller",
  "root-ca-certificate-publisher-controller",
];

export type KwokCluster = {
  stateDir: string;
  server: string;
  adminKubeconfig: string;
  /** The runner's own ServiceAccount token: RBAC as k8s/base grants it. */
  runnerKubeconfig: string;
  /** The apiserver's audit log: Lease writes only (see `auditPolicy`). */
  auditLog: string;
  /** The apiserver's /metrics text. */
  apiserverMetrics(): Promise<string>;
  stop(): Promise<string[]>;
};

export type KwokClusterOptions = { nodes: number; podsPerNode: number; kwokBinary: string };

/**
 * Every Lease write at the Metadata level (who, which Lease, when), nothing else: the section
 * counts Lease writes per second, and a log of every request at 10,000 sessions would be most of
 * the disk traffic.
 */
function auditPolicy(): string {
  return JSON.stringify({
    apiVersion: "audit.k8s.io/v1",
    kind: "Policy",
    omitStages: ["RequestReceived"],
    rules: [
      { level: "Metadata", verbs: ["create", "update", "patch", "delete"], resources: [{ group: "coordination.k8s.io", resources: ["leases"] }] },
      { level: "None" },
    ],
  });
}

/** A fake node kwok manages: its pods' IPs from a loopback range of its own, room for `pods`. */
export function fakeNode(index: number, pods: number): object {
  return {
    apiVersion: "v1",
    kind: "Node",
    metadata: {
      name: `kwok-node-${index}`,
      annotations: { "kwok.x-k8s.io/node": "fake", "node.alpha.kubernetes.io/ttl": "0" },
      labels: { type: "kwok", "kubernetes.io/hostname": `kwok-node-${index}` },
    },
    // 64 /22s a /16: 127.1.0.0/22, 127.1.4.0/22, …, then 127.2.0.0/22 for the 65th node.
    spec: { podCIDR: `127.${1 + Math.floor(index / 64)}.${(index % 64) * 4}.0/22` },
    status: {
      allocatable: { cpu: "1k", memory: "1Ti", pods: String(pods), "ephemeral-storage": "100Ti" },
      capacity: { cpu: "1k", memory: "1Ti", pods: String(pods), "ephemeral-storage": "100Ti" },
    },
  };
}

/**
 * Directories of earlier runs that were killed before their clean-up. One some process still
 * names belongs to a run going on now, whose fixed ports this one would collide with: an error.
 */
async function sweepAbandoned(): Promise<void> {
  const parent = KWOK_STATE_PREFIX.slice(0, KWOK_STATE_PREFIX.lastIndexOf("/"));
  const base = KWOK_STATE_PREFIX.slice(parent.length + 1);
  for (const name of (await readdir(parent)).filter((entry) => entry.startsWith(base))) {
    const dir = join(parent, name);
    const users = await pidsMentioning(dir);
    if (users.length > 0) throw new Error(`another kwok control plane runs from ${dir} (pids ${users.join(", ")}): stop it first`);
    await rm(dir, { recursive: true, force: true });
  }
}

/** The live cluster's processes and directory, for the synchronous last-resort clean-up at exit. */
const live = new Set<{ components: Component[]; stateDir: string }>();
process.once("exit", () => {
  for (const entry of live) {
    for (const component of entry.components) if (isRunning(component)) component.child.kill("SIGKILL");
    rmSync(entry.stateDir, { recursive: true, force: true });
  }
});

export async function startKwokCluster(options: KwokClusterOptions): Promise<KwokCluster> {
  await sweepAbandoned();
  const stateDir = await mkdtemp(KWOK_STATE_PREFIX);
  const logDir = join(stateDir, "logs");
  const pkiDir = join(stateDir, "pki");
  for (const dir of [logDir, pkiDir]) await mkdir(dir, { recursive: true });
  const components: Component[] = [];
  const entry = { components, stateDir };
  live.add(entry);
  const server = `https://127.0.0.1:${KWOK_PORTS.apiserver}`;
  let agent: Agent | undefined;
  const cluster: KwokCluster = {
    stateDir,
    server,
    adminKubeconfig: join(stateDir, "admin.kubeconfig"),
    runnerKubeconfig: join(stateDir, "runner.kubeconfig"),
    auditLog: join(logDir, "audit.log"),
    async apiserverMetrics() {
      const response = await request(`${server}/metrics`, { dispatcher: agent });
      if (response.statusCode !== 200) throw new Error(`apiserver /metrics answered ${response.statusCode}`);
      return response.body.text();
    },
    async stop() {
      const problems: string[] = [];
      // Fakes first, then the control plane from the top down.
      for (const component of [...components].reverse()) await stopComponent(component);
      const left = components.filter(isRunning).map((component) => component.name);
      if (left.length > 0) problems.push(`still running: ${left.join(", ")}`);
      await agent?.close();
      if (process.env.K8S_RUNNER_KWOK_KEEP_STATE !== "true") await rm(stateDir, { recursive: true, force: true }).catch((error: Error) => problems.push(error.message));
      live.delete(entry);
      return problems;
    },
  };
  const start = (name: string, args: string[], binary = controlPlaneBinary(name)) => {
    const component = startComponent(logDir, name, binary, args);
    components.push(component);
    return component;
  };
  try {
    const pki = await makePki(pkiDir, { serverIps: ["127.0.0.1", "10.97.0.1"], serverNames: ["localhost", "kubernetes", "kubernetes.default.svc"], clients: CLIENTS });
    for (const client of CLIENTS) await writeFile(join(stateDir, `${client.name}.kubeconfig`), kubeconfig({ server, ca: pki.ca, user: pki.cert(client.name) }));
    const admin = pki.cert("admin");
    agent = new Agent({ connect: { ca: readFileSync(pki.ca), cert: readFileSync(admin.cert), key: readFileSync(admin.key) } });
    await startControlPlane(cluster, pki, start, agent);
    await startFakes(cluster, options, start);
    await applyRunnerBase(cluster, pki);
    return cluster;
  } catch (error) {
    const problems = await cluster.stop();
    if (problems.length > 0) (error as Error).message += `\n(clean-up: ${problems.join("; ")})`;
    throw error;
  }
}

type Start = (name: string, args: string[], binary?: string) => Component;

async function startControlPlane(cluster: KwokCluster, pki: Pki, start: Start, agent: Agent): Promise<void> {
  const { stateDir } = cluster;
  const etcd = start("etcd", [
    "--name=default",
    `--data-dir=${join(stateDir, "etcd")}`,
    `--listen-client-urls=http://127.0.0.1:${KWOK_PORTS.etcdClient}`,
    `--advertise-client-urls=http://127.0.0.1:${KWOK_PORTS.etcdClient}`,
    `--listen-peer-urls=http://127.0.0.1:${KWOK_PORTS.etcdPeer}`,
    `--initial-advertise-peer-urls=http://127.0.0.1:${KWOK_PORTS.etcdPeer}`,
    `--initial-cluster=default=http://127.0.0.1:${KWOK_PORTS.etcdPeer}`,
    // Benchmark data: losing it on a machine crash costs nothing, and fsync is slow on shared disks.
    "--unsafe-no-fsync",
    "--quota-backend-bytes=8589934592",
  ]);
  await waitUntil(etcd, "etcd to be healthy", async () => {
    const response = await request(`http://127.0.0.1:${KWOK_PORTS.etcdClient}/health`);
    return (await response.body.text()).includes('"health":"true"') || undefined;
  });
  await writeFile(join(stateDir, "audit-policy.json"), auditPolicy());
  const serving = pki.cert("apiserver");
  const apiserver = start("kube-apiserver", [
    `--etcd-servers=http://127.0.0.1:${KWOK_PORTS.etcdClient}`,
    "--bind-address=127.0.0.1",
    "--advertise-address=127.0.0.1",
    // The kubernetes Service's endpoint would be this loopback address, which Endpoints refuse.
    "--endpoint-reconciler-type=none",
    `--secure-port=${KWOK_PORTS.apiserver}`,
    `--tls-cert-file=${serving.cert}`,
    `--tls-private-key-file=${serving.key}`,
    `--client-ca-file=${pki.ca}`,
    "--kubelet-preferred-address-types=InternalIP",
    "--service-account-issuer=https://kubernetes.default.svc.cluster.local",
    `--service-account-key-file=${pki.serviceAccountPub}`,
    `--service-account-signing-key-file=${pki.serviceAccountKey}`,
    "--service-cluster-ip-range=10.97.0.0/16",
    "--authorization-mode=Node,RBAC",
    "--enable-admission-plugins=NamespaceLifecycle,LimitRanger,ServiceAccount,DefaultTolerationSeconds,ResourceQuota,NodeRestriction,PodSecurity,Priority,RuntimeClass",
    `--audit-policy-file=${join(stateDir, "audit-policy.json")}`,
    `--audit-log-path=${cluster.auditLog}`,
    "--audit-log-maxsize=0",
    "--allow-privileged=false",
    "--profiling=false",
    // kwok plays no kubelet stream server. With the translation on, the apiserver opens a terminal
    // WebSocket first and reports the kubelet's refusal inside it; the runner then re-attaches every
    // second for as long as the container runs (docs/benchmarks-kwok.md). Off, the refusal is the
    // upgrade's answer (500), which the runner tries ten times with a growing pause and gives up.
    "--feature-gates=TranslateStreamCloseWebsocketRequests=false",
  ]);
  await waitUntil(apiserver, "the apiserver to be ready", async () => {
    const response = await request(`${cluster.server}/readyz`, { dispatcher: agent });
    return (response.statusCode === 200 && (await response.body.text()) === "ok") || undefined;
  });
  const clientOf = (name: string) => {
    const path = join(stateDir, `${name}.kubeconfig`);
    return [`--kubeconfig=${path}`, `--authentication-kubeconfig=${path}`, `--authorization-kubeconfig=${path}`];
  };
  start("kube-controller-manager", [
    ...clientOf("controller-manager"),
    "--bind-address=127.0.0.1",
    `--secure-port=${KWOK_PORTS.controllerManager}`,
    "--leader-elect=false",
    "--use-service-account-credentials",
    `--controllers=${CONTROLLERS.join(",")}`,
    `--service-account-private-key-file=${pki.serviceAccountKey}`,
    `--root-ca-file=${pki.ca}`,
    "--kube-api-qps=100",
    "--kube-api-burst=200",
  ]);
  // The default 50 requests a second would bind 10,000 pods in no less than 200 s.
  start("kube-scheduler", [...clientOf("scheduler"), "--bind-address=127.0.0.1", `--secure-port=${KWOK_PORTS.scheduler}`, "--leader-elect=false", "--kube-api-qps=300", "--kube-api-burst=600"]);
}

/** kwok and its fake nodes, Ready before the runner starts. */
async function startFakes(cluster: KwokCluster, options: KwokClusterOptions, start: Start): Promise<void> {
  const config = join(cluster.stateDir, "kwok.yaml");
  await writeFile(config, kwokStagesConfig());
  const kwok = start("kwok", [
    `--config=${config}`,
    `--kubeconfig=${join(cluster.stateDir, "kwok.kubeconfig")}`,
    "--manage-nodes-with-annotation-selector=kwok.x-k8s.io/node=fake",
    "--node-ip=127.0.0.1",
    // Nothing listens there: the apiserver's attach and log calls to this "kubelet" are refused at once.
    `--node-port=${KWOK_PORTS.kubelet}`,
    `--server-address=127.0.0.1:${KWOK_PORTS.kwok}`,
    // Unused (every fake node has its podCIDR), but kept on loopback too.
    "--cidr=127.255.0.1/16",
    // No node Leases: the Lease writes counted are the runner's (node heartbeats go to the status).
    "--node-lease-duration-seconds=0",
  ], options.kwokBinary);
  const nodes = Array.from({ length: options.nodes }, (_, index) => fakeNode(index, options.podsPerNode));
  await kubectl(cluster, ["create", "-f", "-"], JSON.stringify({ apiVersion: "v1", kind: "List", items: nodes }));
  await waitUntil(kwok, `all ${options.nodes} fake nodes to be Ready`, async () => {
    const { stdout } = await kubectl(cluster, ["get", "nodes", "-l", "type=kwok", "-o", "jsonpath={.items[*].status.conditions[?(@.type=='Ready')].status}"]);
    return stdout.split(/\s+/).filter((status) => status === "True").length === options.nodes || undefined;
  });
  // The apiserver taints every new node not-ready; the node lifecycle controller, which would
  // lift it, is not run (it would also want heartbeats kwok is not asked for).
  await kubectl(cluster, ["taint", "nodes", "-l", "type=kwok", "node.kubernetes.io/not-ready:NoSchedule-"]);
}

function kubectl(cluster: KwokCluster, args: string[], input?: string) {
  const call = run("kubectl", [`--kubeconfig=${cluster.adminKubeconfig}`, ...args], { cwd: REPO_ROOT, maxBuffer: 64 << 20 });
  if (input !== undefined) call.child.stdin?.end(input);
  return call;
}

/**
 * k8s/base as a user applies it, less the session ResourceQuota (it caps the namespace at 32
 * pods, sized for one replica's default RUNNER_MAX_SESSIONS): the Deployment is left as it is
 * (no deployment controller runs), the runner runs from the working tree with its own token.
 */
async function applyRunnerBase(cluster: KwokCluster, pki: Pki): Promise<void> {
  await kubectl(cluster, ["apply", "-k", "k8s/base"]);
  await kubectl(cluster, ["-n", SESSION_NAMESPACE, "delete", "resourcequota", "--all"]);
  await waitUntil(undefined, "the default ServiceAccount of the session namespace", async () => {
    await kubectl(cluster, ["-n", SESSION_NAMESPACE, "get", "serviceaccount", "default"]);
    return true;
  });
  const { stdout: token } = await kubectl(cluster, ["-n", RUNNER_NAMESPACE, "create", "token", RUNNER_SERVICE_ACCOUNT, "--duration=12h"]);
  await writeFile(cluster.runnerKubeconfig, kubeconfig({ server: cluster.server, ca: pki.ca, user: { token: token.trim() } }));
}
