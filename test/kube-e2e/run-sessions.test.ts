/**
 * Run sessions through the runner's two processes: provision progress, running, the terminal,
 * reachability, stop and cleanup, and every way a pod ends (docs/kubernetes.md "Run pods"). Runs on
 * the simulated cluster in `npm test` and on the real one in `npm run test:cluster`.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { waitFor } from "../support/wait.ts";
import { type ClusterRunner, ON_REAL_CLUSTER, SESSION_NAMESPACE, kubeSessionBody, startClusterRunner } from "../support/kube-runner.ts";
import { eventsOf, eventsUntil, framesToClose, framesUntilText, isStatus, textOf } from "../support/streams.ts";

// A real pod takes seconds to schedule, fetch its bundle and start on a busy 2-core machine.
const TTL_SECONDS = ON_REAL_CLUSTER ? "40" : "4";
const START_DEADLINE_SECONDS = ON_REAL_CLUSTER ? "20" : "2";

describe(`run sessions on the ${ON_REAL_CLUSTER ? "real" : "simulated"} cluster`, () => {
  let runner: ClusterRunner;
  beforeAll(async () => {
    runner = await startClusterRunner({ env: { RUNNER_MAX_TTL_SECONDS: TTL_SECONDS, RUNNER_START_DEADLINE_SECONDS: START_DEADLINE_SECONDS } });
  });
  afterAll(async () => {
    // Every session here ended or was stopped: no pod may be left behind.
    await waitFor("every pod to be gone", async () => (await runner.sessionPods()).length === 0 || undefined);
    await runner?.close();
  });

  it("provisions, runs, echoes the terminal, resizes, reports reachability, and cleans up on stop", async () => {
    const { sessionId } = await runner.client.createSession(
      kubeSessionBody({ listen: true, "report-resize": true }, { ports: [{ port: 3000, protocol: "tcp" }] }),
    );
    const untilReachable = eventsOf(await eventsUntil(runner.client, sessionId, (event) => event.type === "reachability" && event.state === "reachable"));
    const provision = untilReachable.filter((event) => event.type === "progress").map((event) => event.type === "progress" && event.message);
    expect(provision[0]).toBe("Scheduling");
    expect(provision).toContain("Delivering application");
    expect(untilReachable).toContainEqual({ type: "status", status: { kind: "running", endpoints: [{ host: "", port: 3000, protocol: "tcp" }] } });
    expect(untilReachable).toContainEqual({ type: "reachability", app: "app", port: 3000, state: "checking" });
    expect(await runner.sessionPods()).toEqual([`telo-run-${sessionId}`]);

    const terminal = runner.client.terminal(sessionId);
    await terminal.send("hello pod\r");
    expect(textOf(await framesUntilText(terminal, "hello pod"))).toContain("hello pod");
    await terminal.resize(100, 40);
    // The resize reaches the pod's terminal through both processes and the attach's resize channel.
    expect(textOf(await framesUntilText(terminal, "resized to 100x40"))).toContain("resized to 100x40");
    terminal.close();

    await runner.client.deleteSession(sessionId);
    expect(eventsOf(await eventsUntil(runner.client, sessionId)).at(-1)).toEqual({ type: "status", status: { kind: "stopped" } });
    await waitFor("the pod to be gone", async () => !(await runner.sessionPods()).includes(`telo-run-${sessionId}`) || undefined);
  });

  it.each([
    [{ output: "all done\n", "exit-code": 0, "run-ms": 200 }, { kind: "exited", code: 0 }, "all done"],
    [{ output: "bad things\n", "exit-code": 3, "run-ms": 200 }, { kind: "exited", code: 3 }, "bad things"],
  ])("reports an app that exits: %j", async (simulate, status, output) => {
    // A non-zero exit fails the pod, so it is a failure naming the container and its code (docs/kubernetes.md "Ends and failure messages"),
    // with the log's tail as its termination message (FallbackToLogsOnError).
    const { sessionId } = await runner.client.createSession(kubeSessionBody(simulate));
    const events = eventsOf(await eventsUntil(runner.client, sessionId));
    const end = events.at(-1);
    if (status.code === 0) expect(end).toEqual({ type: "status", status });
    else expect(end).toEqual({ type: "status", status: { kind: "failed", message: 'container "session" failed: Error (exit code 3): bad things' } });
    const terminal = runner.client.terminal(sessionId);
    expect(textOf(await framesToClose(terminal))).toContain(output);
  });

  it("fails an image that cannot be pulled, saying so, and removes the pod", async () => {
    const { sessionId } = await runner.client.createSession(kubeSessionBody({ "image-pull": "fail" }));
    const events = eventsOf(await eventsUntil(runner.client, sessionId));
    const progress = events.filter((event) => event.type === "progress").map((event) => event.type === "progress" && event.message);
    expect(progress).toContain("Pulling image");
    // The kubelet's own words while the pull fails, not only "Pulling image".
    expect(progress).toContainEqual(expect.stringMatching(/^session: (ErrImagePull|ImagePullBackOff)/));
    const end = events.at(-1);
    // "start" once: the stage prefix, not again in the message.
    expect(end?.type === "status" && end.status.kind === "failed" && end.status.message).toMatch(
      /^start: pod did not reach Running within the start deadline \(container "session" waiting: (ErrImagePull|ImagePullBackOff)/,
    );
    await waitFor("the pod to be gone", async () => !(await runner.sessionPods()).includes(`telo-run-${sessionId}`) || undefined);
  });

  // Simulator-only: on the real node the bundle fetch is busybox wget against the runner's own
  // listener, which nothing here can slow down; only `config.simulate` can hold an init container.
  if (!ON_REAL_CLUSTER) {
    it("names what the pod waits on when the start deadline passes during a slow bundle fetch", async () => {
      const { sessionId } = await runner.client.createSession(kubeSessionBody({ "run-ms.body-fetch": 60_000 }));
      const end = eventsOf(await eventsUntil(runner.client, sessionId)).at(-1);
      expect(end).toEqual({
        type: "status",
        status: { kind: "failed", message: 'start: pod did not reach Running within the start deadline (init container "body-fetch" still running)' },
      });
      await waitFor("the pod to be gone", async () => !(await runner.sessionPods()).includes(`telo-run-${sessionId}`) || undefined);
    });
  }

  it("reports an OOM kill", async () => {
    const { sessionId } = await runner.client.createSession(kubeSessionBody({ oom: true, "run-ms": 300 }));
    const end = eventsOf(await eventsUntil(runner.client, sessionId)).at(-1);
    expect(end).toEqual({ type: "status", status: { kind: "failed", message: 'container "session" failed: OOMKilled (exit code 137)' } });
  });

  // The kubelet's SIGTERM ends the container with Error (exit code 143), the pod Failed with
  // reason DeadlineExceeded: the deadline is the cause told, not the exit.
  it("ends a session that outlives its TTL, saying so", async () => {
    const { sessionId } = await runner.client.createSession(kubeSessionBody());
    const end = eventsOf(await eventsUntil(runner.client, sessionId)).at(-1);
    expect(end).toEqual({ type: "status", status: { kind: "failed", message: "Pod was active on the node longer than the specified deadline" } });
  });

  it("stops a session whose image pull is still backing off, without waiting for the deadline", async () => {
    const { sessionId } = await runner.client.createSession(kubeSessionBody({ "image-pull": "fail" }));
    await eventsUntil(runner.client, sessionId, (event) => event.type === "progress" && event.message === "Pulling image");
    await runner.client.deleteSession(sessionId);
    expect(eventsOf(await eventsUntil(runner.client, sessionId)).at(-1)).toEqual({ type: "status", status: { kind: "stopped" } });
    await waitFor("the pod to be gone", async () => !(await runner.sessionPods()).includes(`telo-run-${sessionId}`) || undefined);
  });

  it("refuses app names too long for a container name with 400 invalid_app_name", async () => {
    const name = "a".repeat(60);
    const refused = await runner.client
      .createSession(kubeSessionBody({}, { apps: [{ name, entryRelativePath: "telo.yaml" }] }))
      .catch((error: { status: number; body: unknown }) => error);
    expect(refused).toMatchObject({
      status: 400,
      body: { error: "invalid_app_name", message: `app name '${name}' is too long for this runner: at most 59 characters, since its container is named app-<name>` },
    });
  });

  it("writes the hardened pod with its session record into the restricted namespace", async () => {
    const { sessionId } = await runner.client.createSession(kubeSessionBody({}, { env: { GREETING: "hi" } }));
    await eventsUntil(runner.client, sessionId, isStatus("running"));
    const pod = await runner.core.readNamespacedPod({ name: `telo-run-${sessionId}`, namespace: SESSION_NAMESPACE });
    expect(pod.metadata?.labels).toMatchObject({ "app.kubernetes.io/managed-by": "telo-k8s-runner", "telo.run/session-id": sessionId });
    expect(JSON.parse(pod.metadata?.annotations?.["telo.run/session"] ?? "{}")).toMatchObject({ sessionId, mode: "run", envNames: ["GREETING"] });
    expect(pod.spec?.automountServiceAccountToken).toBe(false);
    expect(pod.spec?.securityContext).toMatchObject({ runAsNonRoot: true, seccompProfile: { type: "RuntimeDefault" } });
    await runner.client.deleteSession(sessionId);
  });
});
