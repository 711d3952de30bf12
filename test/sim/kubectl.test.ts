// kubectl as an independent client of the simulator (default validation on): create the runner's
// kinds of objects, list them, read logs, attach, delete, and see its refusals printed.
import { execFile, spawn } from "node:child_process";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { freshNamespace, useCluster } from "./helpers.ts";
import { waitFor } from "../support/wait.ts";

const c = useCluster();
let cacheDir = "";

beforeAll(async () => {
  cacheDir = await mkdtemp(join(tmpdir(), "sim-kubectl-cache-"));
});
afterAll(async () => {
  await rm(cacheDir, { recursive: true, force: true });
});

interface Result {
  code: number;
  stdout: string;
  stderr: string;
}

/** Runs kubectl against the simulator; stdin is piped when given. Missing kubectl fails loudly. */
function kubectl(args: string[], stdin?: string): Promise<Result> {
  return new Promise((resolve, reject) => {
    const child = execFile(
      "kubectl",
      [`--kubeconfig=${c.cluster.kubeconfigPath}`, `--cache-dir=${cacheDir}`, ...args],
      { timeout: 30_000, env: { ...process.env, KUBECONFIG: c.cluster.kubeconfigPath } },
      (err, stdout, stderr) => {
        if (err && (err as NodeJS.ErrnoException).code === "ENOENT") {
          reject(new Error("kubectl is not installed: these tests need it (apt-get install kubectl, or the Kubernetes release binary on PATH)"));
          return;
        }
        resolve({ code: err ? Number((err as { code?: number }).code ?? 1) : 0, stdout, stderr });
      },
    );
    if (stdin !== undefined) child.stdin!.end(stdin);
  });
}

const manifests = (ns: string) => `
apiVersion: v1
kind: Pod
metadata:
  name: telo-run-abc
  namespace: ${ns}
  labels: {app.kubernetes.io/managed-by: telo-k8s-runner, telo.run/session-id: abc}
  annotations: {sim.k8s-runner.dev/output: "booted\\n"}
spec:
  restartPolicy: Never
  automountServiceAccountToken: false
  securityContext: {runAsNonRoot: true, runAsUser: 1000, runAsGroup: 1000, fsGroup: 1000, seccompProfile: {type: RuntimeDefault}}
  containers:
  - name: session
    image: telorun/node:latest-slim
    stdin: true
    tty: false
    ports: [{containerPort: 8080, protocol: TCP}]
    securityContext: {allowPrivilegeEscalation: false, readOnlyRootFilesystem: true, runAsNonRoot: true, capabilities: {drop: [ALL]}}
---
apiVersion: v1
kind: Service
metadata: {name: telo-run-abc, namespace: ${ns}}
spec:
  selector: {telo.run/session-id: abc}
  ports: [{name: p8080, port: 8080, targetPort: 8080, protocol: TCP}]
---
apiVersion: v1
kind: ConfigMap
metadata: {name: telo-workspace-app-0123456789ab, namespace: ${ns}}
data: {telo.yaml: "kind: Telo.Application"}
---
apiVersion: networking.k8s.io/v1
kind: Ingress
metadata: {name: telo-run-abc, namespace: ${ns}}
spec:
  rules:
  - host: 8080-abc.example.test
    http:
      paths: [{path: /, pathType: Prefix, backend: {service: {name: telo-run-abc, port: {number: 8080}}}}]
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: telo-run-abc-8080, namespace: ${ns}}
spec:
  parentRefs: [{group: gateway.networking.k8s.io, kind: Gateway, name: gw}]
  hostnames: [8080-abc.example.test]
  rules: [{matches: [{path: {type: PathPrefix, value: /}}], backendRefs: [{name: telo-run-abc, port: 8080}]}]
---
apiVersion: batch/v1
kind: Job
metadata: {name: telo-build-abc, namespace: ${ns}}
spec:
  backoffLimit: 0
  template:
    metadata: {annotations: {sim.k8s-runner.dev/output: "built\\n"}}
    spec:
      restartPolicy: Never
      containers: [{name: build, image: busybox:1.36}]
`;

describe("kubectl against the simulator", () => {
  it("creates the runner's kinds of objects with validation on, lists them, reads logs, attaches and deletes", async () => {
    const ns = await freshNamespace(c);
    const created = await kubectl(["create", "-f", "-"], manifests(ns));
    expect(created.stderr).toBe("");
    expect(created.stdout.trim().split("\n")).toEqual([
      "pod/telo-run-abc created",
      "service/telo-run-abc created",
      "configmap/telo-workspace-app-0123456789ab created",
      "ingress.networking.k8s.io/telo-run-abc created",
      "httproute.gateway.networking.k8s.io/telo-run-abc-8080 created",
      "job.batch/telo-build-abc created",
    ]);
    expect(c.cluster.counters().requests["create httproutes"]).toBe(1);

    expect((await kubectl(["get", "nodes"])).stdout).toMatch(/^NAME\s+STATUS\s+ROLES\s+AGE\s+VERSION\nsim-node\s+Ready\s+<none>\s+\d+s\s+v1\.32\.0-sim\n$/);
    const explained = await kubectl(["explain", "pod.spec.containers.stdinOnce"]);
    expect(explained.stdout).toMatch(/FIELD:\s+stdinOnce <boolean>/);
    const names = await kubectl(["get", "pods,services,configmaps,ingresses,httproutes,jobs", "-n", ns, "-o", "name"]);
    expect(names.stdout).toContain("pod/telo-run-abc\n");
    expect(names.stdout).toContain("httproute.gateway.networking.k8s.io/telo-run-abc-8080\n");
    expect(names.stdout).toContain("job.batch/telo-build-abc\n");

    await waitFor("pod running", async () => (await kubectl(["get", "pod", "telo-run-abc", "-n", ns, "-o", "jsonpath={.status.phase}"])).stdout === "Running");
    const table = await kubectl(["get", "pods", "-n", ns, "-l", "telo.run/session-id=abc"]);
    expect(table.stdout).toMatch(/^NAME\s+READY\s+STATUS\s+RESTARTS\s+AGE\ntelo-run-abc\s+1\/1\s+Running\s+0\s+\d+s\n$/);

    expect((await kubectl(["logs", "telo-run-abc", "-n", ns])).stdout).toBe("booted\n");
    await waitFor("job complete", async () => (await kubectl(["get", "job", "telo-build-abc", "-n", ns, "-o", "jsonpath={.status.succeeded}"])).stdout === "1");
    expect((await kubectl(["logs", "job/telo-build-abc", "-n", ns])).stdout).toBe("built\n");

    const attached = await kubectl(["attach", "-i", "telo-run-abc", "-n", ns, "-c", "session"], "ping\n");
    expect(attached.stdout).toContain("ping\n");

    expect((await kubectl(["exec", "telo-run-abc", "-n", ns, "--", "sh", "-c", "echo from exec; exit 3"])).code).toBe(3);
    const envOut = await kubectl(["exec", "telo-run-abc", "-n", ns, "--", "env"]);
    expect(envOut.stdout).toContain("HOSTNAME=telo-run-abc\n");
    const missing = await kubectl(["exec", "telo-run-abc", "-n", ns, "--", "ls", "/"]);
    expect(missing.stderr).toContain('exec: "ls": executable file not found in $PATH');
    expect(c.cluster.counters().requests["get pods/exec"]).toBe(3);

    const deleted = await kubectl(["delete", "pod", "telo-run-abc", "-n", ns, "--grace-period=0", "--force"]);
    expect(deleted.stdout).toContain('pod "telo-run-abc" force deleted');
    expect((await kubectl(["get", "svc", "-n", ns, "-o", "name"])).stdout).toBe("service/telo-run-abc\n"); // not owned by the pod here, so not collected
  });

  it("prints the apiserver's refusals: 422 Invalid and 403 Pod Security", async () => {
    const ns = await freshNamespace(c, { "pod-security.kubernetes.io/enforce": "restricted" });
    const invalid = await kubectl(["create", "-n", ns, "-f", "-"], `apiVersion: v1\nkind: ConfigMap\nmetadata: {name: Bad_Name}\n`);
    expect(invalid.code).not.toBe(0);
    expect(invalid.stderr).toContain('The ConfigMap "Bad_Name" is invalid: metadata.name: Invalid value: "Bad_Name"');
    const typo = await kubectl(["create", "-n", ns, "-f", "-"], `apiVersion: v1\nkind: ConfigMap\nmetadata: {name: typo}\ndatta: {a: b}\n`);
    expect(typo.code).not.toBe(0);
    expect(typo.stderr).toContain('ConfigMap in version "v1" cannot be handled as a ConfigMap: strict decoding error: unknown field "datta"');
    const forbidden = await kubectl(["run", "root", "-n", ns, "--image=busybox:1.36", "--restart=Never"]);
    expect(forbidden.code).not.toBe(0);
    expect(forbidden.stderr).toContain('pods "root" is forbidden: violates PodSecurity "restricted:latest"');
  });
});

describe("kubectl imperative commands (protobuf bodies)", () => {
  it("creates namespaces, configmaps, secrets, pods and services from typed-client commands", async () => {
    const ns = `imp${Date.now().toString(36)}`;
    expect((await kubectl(["create", "namespace", ns])).stdout).toBe(`namespace/${ns} created\n`);
    expect((await kubectl(["create", "configmap", "cm", "-n", ns, "--from-literal=a=b", "--from-literal=empty="])).stdout).toBe("configmap/cm created\n");
    expect((await kubectl(["create", "secret", "generic", "s", "-n", ns, "--from-literal=pw=hunter2"])).stdout).toBe("secret/s created\n");
    expect((await kubectl(["run", "web", "-n", ns, "--image=nginx:1.27", "--port=80", "--labels=app=web", "--env=A=1"])).stdout).toBe("pod/web created\n");
    expect((await kubectl(["expose", "pod", "web", "-n", ns, "--port=8080", "--target-port=80"])).stdout).toBe("service/web exposed\n");

    expect((await c.core.readNamespacedConfigMap({ name: "cm", namespace: ns })).data).toEqual({ a: "b", empty: "" });
    expect((await c.core.readNamespacedSecret({ name: "s", namespace: ns })).data).toEqual({ pw: Buffer.from("hunter2").toString("base64") });
    const web = await c.core.readNamespacedPod({ name: "web", namespace: ns });
    expect(web.metadata?.labels).toEqual({ app: "web" });
    expect(web.spec?.containers[0]).toMatchObject({ name: "web", image: "nginx:1.27", env: [{ name: "A", value: "1" }], ports: [{ containerPort: 80, protocol: "TCP" }] });
    const svc = await c.core.readNamespacedService({ name: "web", namespace: ns });
    expect(svc.spec?.selector).toEqual({ app: "web" });
    expect(svc.spec?.ports?.[0]).toMatchObject({ port: 8080, targetPort: 80, protocol: "TCP" });
  });
});

describe("npm run sim", () => {
  it("starts standalone and prints its kubeconfig path", async () => {
    const child = spawn(process.execPath, ["--import", "tsx", "src/sim/main.ts"], {
      cwd: join(import.meta.dirname, "../.."),
      stdio: ["ignore", "pipe", "pipe"],
      env: { ...process.env, SIM_NAMESPACES: "telo-sessions, other" },
    });
    let out = "";
    child.stdout.on("data", (d) => (out += String(d)));
    try {
      const path = await waitFor("kubeconfig line", () => /kubeconfig: (\S+)/.exec(out)?.[1], 30_000);
      const { readFile } = await import("node:fs/promises");
      expect(await readFile(path, "utf8")).toContain("current-context: k8s-runner-sim");
      const url = /listening on (\S+)/.exec(out)![1]!;
      const ns = (await (await fetch(`${url}/api/v1/namespaces/telo-sessions`)).json()) as { status: { phase: string } };
      expect(ns.status.phase).toBe("Active");
    } finally {
      child.kill("SIGTERM");
      await new Promise((r) => child.once("exit", r));
    }
  });
});
