/**
 * The tier's own pods for checks from inside the cluster: `kubectl` as the admin, a namespace the
 * tier makes, and busybox pods (the node's init image) that pass the restricted Pod Security level,
 * so the same spec runs in the session namespace too.
 */
import { execFile } from "node:child_process";
import { promisify } from "node:util";
import { inject } from "vitest";
import { REPO_ROOT } from "../deploy/render.ts";
import { waitFor } from "../support/wait.ts";
import { DNS_SERVICE_IP } from "./fixture/cluster.ts";

const run = promisify(execFile);

export async function kubectl(args: string[], input?: string): Promise<string> {
  const call = run("kubectl", [`--kubeconfig=${inject("realCluster").adminKubeconfig}`, ...args], { cwd: REPO_ROOT, maxBuffer: 32 << 20 });
  if (input !== undefined) call.child.stdin?.end(input);
  return (await call).stdout;
}

export const applyObjects = (items: object[]) => kubectl(["apply", "-f", "-"], JSON.stringify({ apiVersion: "v1", kind: "List", items }));

/** A busybox pod running `script` under sh, hardened as restricted admission requires. */
export function shellPod(input: { name: string; namespace: string; script: string; labels?: Record<string, string>; port?: number }): object {
  return {
    apiVersion: "v1",
    kind: "Pod",
    metadata: { name: input.name, namespace: input.namespace, labels: input.labels ?? {} },
    spec: {
      restartPolicy: "Never",
      automountServiceAccountToken: false,
      terminationGracePeriodSeconds: 1,
      securityContext: { runAsNonRoot: true, runAsUser: 1000, runAsGroup: 1000, seccompProfile: { type: "RuntimeDefault" } },
      containers: [
        {
          name: "main",
          image: inject("realCluster").initImage,
          imagePullPolicy: "Never",
          command: ["sh", "-c", input.script],
          ...(input.port ? { ports: [{ containerPort: input.port }] } : {}),
          securityContext: { allowPrivilegeEscalation: false, readOnlyRootFilesystem: true, capabilities: { drop: ["ALL"] } },
          volumeMounts: [{ name: "tmp", mountPath: "/tmp" }],
        },
      ],
      volumes: [{ name: "tmp", emptyDir: {} }],
    },
  };
}

type PodStatus = { status: { phase?: string; podIP?: string; conditions?: Array<{ type: string; status: string }> } };

async function podStatus(namespace: string, name: string): Promise<PodStatus["status"]> {
  return (JSON.parse(await kubectl(["-n", namespace, "get", "pod", name, "-o", "json"])) as PodStatus).status;
}

/** Waits for the pod to be Ready and returns its IP. */
export async function readyPodIp(namespace: string, name: string): Promise<string> {
  return waitFor(`pod ${namespace}/${name} to be Ready`, async () => {
    const status = await podStatus(namespace, name);
    return status.conditions?.some((c) => c.type === "Ready" && c.status === "True") && status.podIP ? status.podIP : undefined;
  }, 60_000);
}

/** Runs `script` in a fresh pod to its end; its phase and its output. */
export async function runToEnd(input: { name: string; namespace: string; script: string; labels?: Record<string, string> }): Promise<{ phase: string; log: string }> {
  await applyObjects([shellPod(input)]);
  const phase = await waitFor(`pod ${input.namespace}/${input.name} to end`, async () => {
    const status = await podStatus(input.namespace, input.name);
    return status.phase === "Succeeded" || status.phase === "Failed" ? status.phase : undefined;
  }, 60_000);
  const log = await kubectl(["-n", input.namespace, "logs", input.name]);
  await kubectl(["-n", input.namespace, "delete", "pod", input.name, "--wait=false"]);
  return { phase, log };
}

/** `script` run by sh inside a running container: its exit code and output. */
export async function execIn(namespace: string, pod: string, container: string, script: string): Promise<{ code: number; out: string }> {
  try {
    const out = await kubectl(["-n", namespace, "exec", pod, "-c", container, "--", "sh", "-c", script]);
    return { code: 0, out };
  } catch (error) {
    const failed = error as { code?: number; stdout?: string; stderr?: string };
    return { code: typeof failed.code === "number" ? failed.code : -1, out: `${failed.stdout ?? ""}${failed.stderr ?? ""}` };
  }
}

export async function makeNamespace(name: string, labels: Record<string, string> = {}): Promise<void> {
  await applyObjects([{ apiVersion: "v1", kind: "Namespace", metadata: { name, labels: { "pod-security.kubernetes.io/enforce": "restricted", ...labels } } }]);
  await waitFor(`the default ServiceAccount of ${name}`, async () => (await kubectl(["-n", name, "get", "serviceaccount", "default", "-o", "name"])).trim() !== "" || undefined, 30_000);
}

export async function deleteNamespace(name: string): Promise<void> {
  await kubectl(["delete", "namespace", name, "--ignore-not-found", "--wait=true", "--timeout=120s"]);
}

/**
 * Waits until the cluster DNS answers `name` with `ip`, asked from this machine (busybox's
 * nslookup at the kube-dns ClusterIP). CoreDNS learns of a new Service by its watch, which lags
 * on a loaded machine and after an apiserver restart (apiserver-restart.test.ts).
 */
export async function dnsKnows(name: string, ip: string): Promise<void> {
  await waitFor(`the cluster DNS to answer ${name}`, async () => {
    const { stdout } = await run("busybox", ["nslookup", name, DNS_SERVICE_IP]).catch(() => ({ stdout: "" }));
    return stdout.includes(ip) || undefined;
  }, 90_000);
}
