/**
 * The runner's processes killed or restarted under live sessions (docs/kubernetes.md "Boot: adoption and
 * reaping"): nothing is lost with the api process, a SIGKILLed supervisor re-adopts its sessions
 * from their pods, and pods no record explains are reaped at boot. Runs on the simulated cluster
 * in `npm test` and on the real one in `npm run test:cluster`.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { waitFor } from "../support/wait.ts";
import { type ClusterRunner, ON_REAL_CLUSTER, SESSION_NAMESPACE, kubeSessionBody, startClusterRunner } from "../support/kube-runner.ts";
import { eventsOf, eventsUntil, framesUntilText, isStatus, textOf } from "../support/streams.ts";
import { auditedWrites } from "../support/write-audit.ts";

describe(`runner restarts on the ${ON_REAL_CLUSTER ? "real" : "simulated"} cluster`, () => {
  let runner: ClusterRunner;
  beforeAll(async () => {
    runner = await startClusterRunner();
  });
  afterAll(async () => {
    // No test may leave a pod behind.
    await waitFor("every pod to be gone", async () => (await runner.sessionPods()).length === 0 || undefined, 60_000);
    await runner?.close();
  });

  const running = async () => {
    const { sessionId } = await runner.client.createSession(kubeSessionBody());
    await eventsUntil(runner.client, sessionId, isStatus("running"));
    return sessionId;
  };
  /** A stopped session's pod is deleted at once (grace 0): gone within seconds, not the default 30. */
  const stopAndWaitGone = async (sessionId: string) => {
    await runner.client.deleteSession(sessionId);
    await waitFor("the pod to be gone", async () => !(await runner.sessionPods()).includes(`telo-run-${sessionId}`) || undefined, 8_000);
  };

  it("loses nothing when the api process is killed", async () => {
    const sessionId = await running();
    await runner.stopApi("SIGKILL");
    await runner.startApi();
    expect((await runner.client.getSession(sessionId)).status.kind).toBe("running");
    await stopAndWaitGone(sessionId);
  });

  it("re-adopts a live session after the supervisor is killed with SIGKILL", async () => {
    const sessionId = await running();
    const before = await runner.client.getSession(sessionId);
    const terminal = runner.client.terminal(sessionId);
    await terminal.send("one\r");
    await framesUntilText(terminal, "one");

    // A reader that reconnects across the restart keeps going.
    const seen: string[] = [];
    const reading = (async () => {
      for await (const item of runner.client.events(sessionId, { maxReconnectDelayMs: 300 })) {
        seen.push("gap" in item ? "gap" : item.event.type === "status" ? `status:${item.event.status.kind}` : item.event.type);
      }
    })();
    await waitFor("the reader to catch up", () => seen.includes("status:running") || undefined);

    await runner.stopSupervisor("SIGKILL");
    expect(await terminal.closed).toEqual({ code: 1011, reason: "supervisor unavailable" });
    await runner.startSupervisor();

    const after = await runner.client.getSession(sessionId);
    expect(after).toMatchObject({ sessionId, createdAt: before.createdAt, mode: "run", status: { kind: "running" } });
    // The adoption's claim replaced the pod as the apiserver has it, not the watch's trimmed
    // copy, which lacks the init containers: no write of the runner's was refused as invalid.
    const writes = await auditedWrites(runner, SESSION_NAMESPACE);
    expect(writes.filter((write) => write.resource === "pods" && write.name === `telo-run-${sessionId}` && write.verb === "update").map((write) => write.code)).toContain(200);
    expect(writes.filter((write) => write.resource === "pods" && write.name.startsWith("telo-run-") && write.code === 422)).toEqual([]);
    const again = runner.client.terminal(sessionId);
    await again.send("two\r");
    expect(textOf(await framesUntilText(again, "two"))).toContain("two");
    again.close();

    await stopAndWaitGone(sessionId);
    await reading;
    expect(seen.slice(-1)).toEqual(["status:stopped"]);
    expect(seen).toContain("gap");
  });

  // Graceful shutdown: a SIGTERMed supervisor leaves session pods for the next one.
  it("leaves a live session's pod running on SIGTERM, and the next supervisor re-adopts it", async () => {
    const sessionId = await running();
    await runner.stopSupervisor("SIGTERM");
    expect(await runner.sessionPods()).toContain(`telo-run-${sessionId}`);
    await runner.startSupervisor();
    expect((await runner.client.getSession(sessionId)).status.kind).toBe("running");
    await stopAndWaitGone(sessionId);
  });

  /** A session whose pod stays Pending (its image pull keeps failing), re-adopted by a new supervisor. */
  const adoptedWhilePending = async () => {
    const { sessionId } = await runner.client.createSession(kubeSessionBody({ "image-pull": "fail" }));
    await eventsUntil(runner.client, sessionId, (event) => event.type === "progress" && event.message === "Pulling image");
    await runner.stopSupervisor("SIGKILL");
    await runner.startSupervisor();
    expect((await runner.client.getSession(sessionId)).status.kind).toBe("starting");
    return sessionId;
  };

  // Found by the chaos run: an adopted start that failed was swallowed, leaving the
  // session `starting` for good, with a workload whose stop did nothing.
  it("fails a re-adopted session whose pod is deleted behind the runner's back before it runs", async () => {
    const sessionId = await adoptedWhilePending();
    await runner.core.deleteNamespacedPod({ name: `telo-run-${sessionId}`, namespace: SESSION_NAMESPACE, gracePeriodSeconds: 0 });
    expect(eventsOf(await eventsUntil(runner.client, sessionId)).at(-1)).toEqual({
      type: "status",
      status: { kind: "failed", message: "start: pod disappeared before reaching Running" },
    });
  });

  it("stops a re-adopted session that is still starting when it is deleted", async () => {
    const sessionId = await adoptedWhilePending();
    await runner.client.deleteSession(sessionId);
    expect(eventsOf(await eventsUntil(runner.client, sessionId)).at(-1)).toEqual({ type: "status", status: { kind: "stopped" } });
    await waitFor("the pod to be gone", async () => !(await runner.sessionPods()).includes(`telo-run-${sessionId}`) || undefined, 60_000);
  });

  it("reaps session pods no record explains, at boot", async () => {
    await runner.core.createNamespacedPod({
      namespace: SESSION_NAMESPACE,
      body: {
        metadata: { name: "stray", labels: { "app.kubernetes.io/managed-by": "telo-k8s-runner" } },
        spec: {
          automountServiceAccountToken: false,
          securityContext: { runAsNonRoot: true, runAsUser: 1000, seccompProfile: { type: "RuntimeDefault" } },
          containers: [
            {
              name: "c",
              image: "busybox",
              resources: { limits: { cpu: "100m", memory: "64Mi" }, requests: { cpu: "100m", memory: "64Mi" } },
              securityContext: { allowPrivilegeEscalation: false, capabilities: { drop: ["ALL"] } },
            },
          ],
        },
      },
    });
    await runner.stopSupervisor();
    await runner.startSupervisor();
    await waitFor("the stray pod to be reaped", async () => !(await runner.sessionPods()).includes("stray") || undefined);
  });
});
