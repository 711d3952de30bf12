/**
 * The session NetworkPolicy as installed (k8s/base or k8s/chart), enforced by kube-router
 * (test/cluster/fixture/network-policy.ts), tested from inside a session pod: the runner's own
 * session pods, their kernel stand-in's shell run with `kubectl exec`. Every address dialled is
 * this cluster's own: its pods, Services, the node's address, and the metadata address, which the
 * tier routes to a listener of its own (test/cluster/fixture/metadata.ts).
 *
 * Each refusal has a control that shows the target answers when no policy stands in the way:
 * the same dials from a pod in a namespace of the tier's that no policy selects, and the
 * runner's own reachability check of the session's ports.
 */
import { expect, inject } from "vitest";
import type { RunnerClient } from "../../../src/client/index.ts";
import { kubeSessionBody, SESSION_NAMESPACE } from "../../support/kube-runner.ts";
import { eventsUntil, isStatus } from "../../support/streams.ts";
import { waitFor } from "../../support/wait.ts";
import { METADATA_ADDRESS } from "../fixture/configs.ts";
import { NODE_PORTS, RUNNER_NAMESPACE } from "../fixture/cluster.ts";
import { firewallCovers } from "../fixture/network-policy.ts";
import { applyObjects, deleteNamespace, execIn, kubectl, makeNamespace, readyPodIp, shellPod } from "../pods.ts";

export const OTHER_NAMESPACE = "k8s-runner-isolation";
const SESSION_PORTS = [3000, 3001];

/** Turns enforcement on (once per run); from then on every new pod meets the policies. */
export async function enforceNetworkPolicy(): Promise<void> {
  const response = await fetch(`${inject("realCluster").controlUrl}/network-policy/enforce`, { method: "POST" });
  expect(response.status, await response.text()).toBe(204);
}

type Target = { name: string; host: string; port: number };

/**
 * One shell script dialling every target at once (TCP connect, 2 s), then the HTTP and DNS
 * checks; one `name code` line each, 0 meaning it got through.
 */
function probeScript(targets: Target[], extra: Record<string, string>): string {
  const dials = targets.map((t) => `( timeout 5 nc -w 2 ${t.host} ${t.port} </dev/null >/dev/null 2>&1; echo "${t.name} $?" ) &`);
  const others = Object.entries(extra).map(([name, command]) => `( ${command} >/dev/null 2>&1; echo "${name} $?" ) &`);
  return [...dials, ...others, "wait"].join("\n");
}

async function probe(namespace: string, pod: string, container: string, targets: Target[], extra: Record<string, string> = {}): Promise<Record<string, number>> {
  const { out } = await execIn(namespace, pod, container, probeScript(targets, extra));
  const results = Object.fromEntries(out.split("\n").flatMap((line) => (/^\S+ \d+$/.test(line) ? [[line.split(" ")[0]!, Number(line.split(" ")[1])]] : [])));
  expect(Object.keys(results).sort()).toEqual([...targets.map((t) => t.name), ...Object.keys(extra)].sort());
  return results;
}

async function podOf(sessionId: string): Promise<{ name: string; ip: string }> {
  const out = await kubectl(["-n", SESSION_NAMESPACE, "get", "pods", "-l", `telo.run/session-id=${sessionId}`, "-o", "jsonpath={.items[0].metadata.name} {.items[0].status.podIP}"]);
  const [name, ip] = out.trim().split(" ");
  return { name: name!, ip: ip! };
}

async function startSession(client: RunnerClient, ports: number[]): Promise<string> {
  const { sessionId } = await client.createSession(kubeSessionBody({ listen: true }, { ports: ports.map((port) => ({ port, protocol: "tcp" })) }));
  await eventsUntil(client, sessionId, isStatus("running"));
  return sessionId;
}

/** Everything a session pod may and may not reach, and who may reach it. */
export async function isolationHolds(client: RunnerClient): Promise<void> {
  const real = inject("realCluster");
  // The target session: its ports answer the runner (its reachability check dials each one).
  const targetId = await startSession(client, SESSION_PORTS);
  await eventsUntil(client, targetId, (event) => event.type === "reachability" && event.port === SESSION_PORTS[1] && event.state === "reachable");
  const proberId = await startSession(client, []);
  const [target, prober] = [await podOf(targetId), await podOf(proberId)];
  await makeNamespace(OTHER_NAMESPACE);
  await applyObjects([shellPod({ name: "outsider", namespace: OTHER_NAMESPACE, script: "exec sleep 3600" })]);
  await readyPodIp(OTHER_NAMESPACE, "outsider");
  for (const [namespace, pod] of [[SESSION_NAMESPACE, target.name], [SESSION_NAMESPACE, prober.name], [OTHER_NAMESPACE, "outsider"]] as const) {
    await waitFor(`kube-router's firewall for ${namespace}/${pod}`, () => firewallCovers(namespace, pod), 60_000);
  }
  const runner = (await kubectl(["-n", RUNNER_NAMESPACE, "get", "pods", "-l", "app.kubernetes.io/name=telo-k8s-runner", "-o", "jsonpath={.items[0].status.podIP}"])).trim();
  const service = (await kubectl(["-n", RUNNER_NAMESPACE, "get", "service", "telo-k8s-runner", "-o", "jsonpath={.spec.clusterIP}"])).trim();
  const targets: Target[] = [
    ...SESSION_PORTS.map((port) => ({ name: `session-pod-${port}`, host: target.ip, port })),
    { name: "runner-api-pod", host: runner, port: 8062 },
    { name: "runner-api-service", host: service, port: 8062 },
    { name: "apiserver-service", host: "10.96.0.1", port: 443 },
    { name: "apiserver-node", host: real.hostAddress, port: NODE_PORTS.apiserver },
    { name: "kubelet", host: real.hostAddress, port: NODE_PORTS.kubelet },
    { name: "metadata", host: METADATA_ADDRESS, port: 80 },
  ];
  const allowed = {
    // By name, as RUNNER_SELF_URL reaches it: cluster DNS, then the bundle listener.
    "bundle-port-by-name": "timeout 5 wget -q -O - http://telo-k8s-runner.telo-runner.svc:8063/healthz",
    "cluster-dns": "nslookup kubernetes.default.svc.cluster.local",
  };

  const fromSession = await probe(SESSION_NAMESPACE, prober.name, "session", targets, allowed);
  const fromOutside = await probe(OTHER_NAMESPACE, "outsider", "main", targets);
  const denied = Object.fromEntries(targets.map((t) => [t.name, "refused"]));
  const outcome = (results: Record<string, number>) => Object.fromEntries(Object.entries(results).map(([name, code]) => [name, code === 0 ? "reached" : "refused"]));
  expect(outcome(fromSession)).toEqual({ ...denied, "bundle-port-by-name": "reached", "cluster-dns": "reached" });
  // The controls: without a policy on the dialling pod, all but the session pod answer.
  expect(outcome(fromOutside)).toEqual({ ...Object.fromEntries(targets.map((t) => [t.name, "reached"])), ...Object.fromEntries(SESSION_PORTS.map((port) => [`session-pod-${port}`, "refused"])) });

  for (const sessionId of [targetId, proberId]) await client.deleteSession(sessionId);
  await deleteNamespace(OTHER_NAMESPACE);
}
