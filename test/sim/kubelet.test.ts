// The simulated kubelet through client-node: phases and waiting reasons, init containers,
// termination reasons, deadlines, graceful deletion, pod IPs with real listeners, and logs.
import { connect } from "node:net";
import { Log, type V1Pod } from "@kubernetes/client-node";
import { Writable } from "node:stream";
import { describe, expect, it } from "vitest";
import { freshNamespace, pod, statusOf, useCluster } from "./helpers.ts";
import { waitFor } from "../support/wait.ts";

const c = useCluster();

async function until(ns: string, name: string, what: string, test: (p: V1Pod) => boolean): Promise<V1Pod> {
  return waitFor(what, async () => {
    const p = await c.core.readNamespacedPod({ name, namespace: ns });
    return test(p) ? p : undefined;
  });
}

function dial(ip: string, port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const s = connect({ host: ip, port });
    s.once("connect", () => {
      s.destroy();
      resolve(true);
    });
    s.once("error", () => resolve(false));
  });
}

describe("simulated kubelet", () => {
  it("runs a pod to Running with a distinct loopback IP and real listeners on its ports", async () => {
    const ns = await freshNamespace(c);
    const spec = { container: { stdin: true, tty: true, ports: [{ containerPort: 8080 }, { containerPort: 9090 }] } };
    await c.core.createNamespacedPod({ namespace: ns, body: pod("a", spec) });
    await c.core.createNamespacedPod({ namespace: ns, body: pod("b", spec) });
    const a = await until(ns, "a", "a running", (p) => p.status?.phase === "Running");
    const b = await until(ns, "b", "b running", (p) => p.status?.phase === "Running");
    expect(a.status?.podIP).toMatch(/^127\.\d+\.\d+\.\d+$/);
    expect(a.status?.podIP).not.toBe(b.status?.podIP);
    expect(a.spec?.nodeName).toBe("sim-node");
    expect(a.status?.containerStatuses?.[0]).toMatchObject({ name: "main", ready: true, started: true, restartCount: 0 });
    expect(a.status?.conditions?.find((x) => x.type === "Ready")?.status).toBe("True");
    expect(await dial(a.status!.podIP!, 8080)).toBe(true);
    expect(await dial(a.status!.podIP!, 9090)).toBe(true);
    const body = await (await fetch(`http://${b.status!.podIP}:8080/`)).text();
    expect(body).toContain("b/main");
    const events = await c.core.listNamespacedEvent({ namespace: ns, fieldSelector: `involvedObject.name=a,involvedObject.uid=${a.metadata!.uid}` });
    expect(events.items.map((e) => e.reason).sort()).toEqual(["Created", "Pulled", "Scheduled", "Started"]);
    expect(events.items.find((e) => e.reason === "Started")?.involvedObject.fieldPath).toBe("spec.containers{main}");
  });

  it("reports ContainerCreating while a container starts slowly", async () => {
    const ns = await freshNamespace(c);
    await c.core.createNamespacedPod({ namespace: ns, body: pod("slow", { annotations: { "sim.k8s-runner.dev/start-delay-ms": "60000" }, container: { stdin: true } }) });
    const p = await until(ns, "slow", "scheduled", (x) => !!x.spec?.nodeName);
    expect(p.status?.phase).toBe("Pending");
    expect(p.status?.containerStatuses?.[0]?.state?.waiting?.reason).toBe("ContainerCreating");
  });

  it("alternates ErrImagePull and ImagePullBackOff for an image that cannot be pulled", async () => {
    const ns = await freshNamespace(c);
    await c.core.createNamespacedPod({ namespace: ns, body: pod("pull", { container: { image: "registry.example/nonexistent:1" } }) });
    const reasons = new Set<string>();
    await waitFor("both pull reasons", async () => {
      const p = await c.core.readNamespacedPod({ name: "pull", namespace: ns });
      const r = p.status?.containerStatuses?.[0]?.state?.waiting?.reason;
      if (r) reasons.add(r);
      return reasons.has("ErrImagePull") && reasons.has("ImagePullBackOff") && p.status?.phase === "Pending";
    });
    await c.core.createNamespacedPod({ namespace: ns, body: pod("pull2", { annotations: { "sim.k8s-runner.dev/image-pull": "fail" } }) });
    const p2 = await until(ns, "pull2", "pull failure", (x) => !!x.status?.containerStatuses?.[0]?.state?.waiting?.reason?.match(/ImagePull/));
    expect(p2.status?.containerStatuses?.[0]?.state?.waiting?.message).toBeTruthy();
  });

  it("runs init containers first (PodInitializing) and fails the pod when one fails", async () => {
    const ns = await freshNamespace(c);
    const init = [{ name: "body-fetch", image: "busybox:stable", command: ["sh", "-c", "wget ..."] }];
    await c.core.createNamespacedPod({
      namespace: ns,
      body: pod("ok", { annotations: { "sim.k8s-runner.dev/run-ms.body-fetch": "300" }, spec: { initContainers: init }, container: { stdin: true, tty: true } }),
    });
    const initializing = await until(ns, "ok", "init running", (p) => p.status?.initContainerStatuses?.[0]?.state?.running !== undefined);
    expect(initializing.status?.phase).toBe("Pending");
    expect(initializing.status?.containerStatuses?.[0]?.state?.waiting?.reason).toBe("PodInitializing");
    const running = await until(ns, "ok", "running", (p) => p.status?.phase === "Running");
    expect(running.status?.initContainerStatuses?.[0]?.state?.terminated).toMatchObject({ exitCode: 0, reason: "Completed" });

    await c.core.createNamespacedPod({
      namespace: ns,
      body: pod("bad", {
        annotations: { "sim.k8s-runner.dev/exit-code.body-fetch": "1", "sim.k8s-runner.dev/stderr.body-fetch": "wget: download timed out\n" },
        spec: { initContainers: init },
        container: { stdin: true, tty: true },
      }),
    });
    const failed = await until(ns, "bad", "failed", (p) => p.status?.phase === "Failed");
    expect(failed.status?.initContainerStatuses?.[0]?.state?.terminated).toMatchObject({ exitCode: 1, reason: "Error" });
    expect(failed.status?.containerStatuses?.[0]?.state?.waiting?.reason).toBe("PodInitializing");
  });

  it("ends containers as scripted: Completed, Error with a code, OOMKilled", async () => {
    const ns = await freshNamespace(c);
    const cases: [string, Record<string, string>, string, number, string][] = [
      ["done", { "sim.k8s-runner.dev/exit-code": "0", "sim.k8s-runner.dev/output": "bye\n" }, "Succeeded", 0, "Completed"],
      ["err", { "sim.k8s-runner.dev/exit-code": "3" }, "Failed", 3, "Error"],
      ["oom", { "sim.k8s-runner.dev/oom": "true" }, "Failed", 137, "OOMKilled"],
    ];
    for (const [name, annotations] of cases) await c.core.createNamespacedPod({ namespace: ns, body: pod(name, { annotations, container: { stdin: true } }) });
    for (const [name, , phase, exitCode, reason] of cases) {
      const p = await until(ns, name, `${name} ${phase}`, (x) => x.status?.phase === phase);
      expect(p.status?.containerStatuses?.[0]?.state?.terminated).toMatchObject({ exitCode, reason });
    }
  });

  it("runs simple shell command lines for real: echo, sleep, exit", async () => {
    const ns = await freshNamespace(c);
    await c.core.createNamespacedPod({ namespace: ns, body: pod("sh", { container: { command: ["sh", "-c", "echo hi && sleep 0.2; echo 'bye now'; exit 3"] } }) });
    const p = await until(ns, "sh", "failed", (x) => x.status?.phase === "Failed");
    expect(p.status?.containerStatuses?.[0]?.state?.terminated).toMatchObject({ exitCode: 3, reason: "Error" });
    expect(await c.core.readNamespacedPodLog({ name: "sh", namespace: ns })).toBe("hi\nbye now\n");
    await c.core.createNamespacedPod({ namespace: ns, body: pod("sleeper", { container: { command: ["sleep", "600"] } }) });
    await until(ns, "sleeper", "running", (x) => x.status?.phase === "Running");
  });

  it("completes a container without stdin at once, as `cat` reading EOF would", async () => {
    const ns = await freshNamespace(c);
    await c.core.createNamespacedPod({ namespace: ns, body: pod("plain") });
    const p = await until(ns, "plain", "succeeded", (x) => x.status?.phase === "Succeeded");
    expect(p.status?.containerStatuses?.[0]?.state?.terminated?.reason).toBe("Completed");
  });

  it("restarts containers under restartPolicy Always with CrashLoopBackOff in between", async () => {
    const ns = await freshNamespace(c);
    await c.core.createNamespacedPod({ namespace: ns, body: pod("crashy", { annotations: { "sim.k8s-runner.dev/crash": "true" }, spec: { restartPolicy: "Always" } }) });
    const p = await until(ns, "crashy", "restarts", (x) => (x.status?.containerStatuses?.[0]?.restartCount ?? 0) >= 2);
    expect(p.status?.containerStatuses?.[0]?.lastState?.terminated).toMatchObject({ exitCode: 139, reason: "Error" });
    expect(await c.core.readNamespacedPodLog({ name: "crashy", namespace: ns, previous: true })).toBe("Segmentation fault (core dumped)\n");
  });

  it("fails a pod that outlives activeDeadlineSeconds", async () => {
    const ns = await freshNamespace(c);
    // The deadline is set once the container runs: on a loaded machine a 1 s deadline set at
    // creation can pass before the container has started, and then no SIGTERM ends it.
    await c.core.createNamespacedPod({ namespace: ns, body: pod("dl", { container: { stdin: true, tty: true } }) });
    await until(ns, "dl", "running", (x) => x.status?.phase === "Running");
    await c.core.patchNamespacedPod({ name: "dl", namespace: ns, body: [{ op: "add", path: "/spec/activeDeadlineSeconds", value: 1 }] });
    const p = await until(ns, "dl", "deadline", (x) => x.status?.phase === "Failed");
    expect(p.status?.reason).toBe("DeadlineExceeded");
    expect(p.status?.message).toBe("Pod was active on the node longer than the specified deadline");
    // As on a real node: the kubelet's SIGTERM ended the container.
    expect(p.status?.containerStatuses?.[0]?.state?.terminated).toMatchObject({ exitCode: 143, reason: "Error" });
  });

  it("deletes gracefully: deletionTimestamp, terminal status, then gone; grace 0 removes at once", async () => {
    const ns = await freshNamespace(c);
    await c.core.createNamespacedPod({ namespace: ns, body: pod("g", { container: { stdin: true, tty: true } }) });
    await until(ns, "g", "running", (p) => p.status?.phase === "Running");
    const marked = await c.core.deleteNamespacedPod({ name: "g", namespace: ns });
    expect(marked.metadata?.deletionTimestamp).toBeTruthy();
    expect(marked.metadata?.deletionGracePeriodSeconds).toBe(30);
    await waitFor("pod gone", async () => (await statusOf(c.core.readNamespacedPod({ name: "g", namespace: ns }))).code === 404);

    await c.core.createNamespacedPod({ namespace: ns, body: pod("s", { annotations: { "sim.k8s-runner.dev/ignore-sigterm": "true" }, container: { stdin: true } }) });
    await until(ns, "s", "running", (p) => p.status?.phase === "Running");
    await c.core.deleteNamespacedPod({ name: "s", namespace: ns, gracePeriodSeconds: 1 });
    const terminating = await c.core.readNamespacedPod({ name: "s", namespace: ns });
    expect(terminating.metadata?.deletionTimestamp).toBeTruthy();
    await waitFor("ignored SIGTERM, killed after the grace period", async () => (await statusOf(c.core.readNamespacedPod({ name: "s", namespace: ns }))).code === 404);

    await c.core.createNamespacedPod({ namespace: ns, body: pod("z", { container: { stdin: true } }) });
    await until(ns, "z", "running", (p) => p.status?.phase === "Running");
    await c.core.deleteNamespacedPod({ name: "z", namespace: ns, gracePeriodSeconds: 0 });
    expect((await statusOf(c.core.readNamespacedPod({ name: "z", namespace: ns }))).code).toBe(404);
  });

  it("serves container logs with tail, timestamps and follow, and refuses a waiting container", async () => {
    const ns = await freshNamespace(c);
    await c.core.createNamespacedPod({
      namespace: ns,
      body: pod("logs", { annotations: { "sim.k8s-runner.dev/output": "one\ntwo\nthree\n", "sim.k8s-runner.dev/run-ms": "400" } }),
    });
    await until(ns, "logs", "running", (p) => p.status?.phase === "Running");
    expect(await c.core.readNamespacedPodLog({ name: "logs", namespace: ns })).toBe("one\ntwo\nthree\n");
    expect(await c.core.readNamespacedPodLog({ name: "logs", namespace: ns, tailLines: 1 })).toBe("three\n");
    const stamped = await c.core.readNamespacedPodLog({ name: "logs", namespace: ns, timestamps: true });
    expect(stamped.split("\n")[0]).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d+Z one$/);

    let followed = "";
    let ended = false;
    const out = new Writable({
      write(chunk, _enc, cb) {
        followed += String(chunk);
        cb();
      },
      final(cb) {
        ended = true;
        cb();
      },
    });
    await new Log(c.kc).log(ns, "logs", "main", out, { follow: true });
    await waitFor("followed log to end with the container", () => ended);
    expect(followed).toBe("one\ntwo\nthree\n");

    await c.core.createNamespacedPod({ namespace: ns, body: pod("wait", { annotations: { "sim.k8s-runner.dev/start-delay-ms": "60000" } }) });
    const refused = await statusOf(c.core.readNamespacedPodLog({ name: "wait", namespace: ns }));
    expect(refused.code).toBe(400);
  });
});
