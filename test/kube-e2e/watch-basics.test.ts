/**
 * A watch session's life on both clusters: one pod with the workspace container and the app's,
 * the workspace-app ConfigMap, the bundle seeded into the workspace and served through /v1, the
 * app's kernel reporting its port, and a stop that removes the pod. Runs on the simulated
 * cluster in `npm test` and on the real one in `npm run test:cluster`; the scenarios that script
 * containers per app stay in watch-sessions.test.ts, on the simulator.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { waitFor } from "../support/wait.ts";
import { type ClusterRunner, ON_REAL_CLUSTER, SESSION_NAMESPACE, kubeSessionBody, startClusterRunner } from "../support/kube-runner.ts";
import { eventsOf, eventsUntil, isStatus } from "../support/streams.ts";

const WEB = "web/telo.yaml";

describe(`a watch session on the ${ON_REAL_CLUSTER ? "real" : "simulated"} cluster`, () => {
  let runner: ClusterRunner;
  beforeAll(async () => {
    runner = await startClusterRunner({ env: { RUNNER_WATCH_SESSIONS: "true" } });
  });
  afterAll(async () => {
    await waitFor("every session pod to be gone", async () => (await runner.sessionPods()).length === 0 || undefined, 60_000);
    await runner?.close();
  });

  it("brings up its pod, seeds and serves the workspace, and is gone after a stop", async () => {
    const ports = [{ port: 3000, protocol: "tcp" as const }];
    const { sessionId } = await runner.client.createSession(
      kubeSessionBody(
        {},
        {
          mode: "watch",
          apps: [{ name: "web", entryRelativePath: WEB, ports, io: "tty" }],
          bundle: { entryRelativePath: WEB, files: [{ relativePath: WEB, contents: "kind: Telo.Application\nmetadata: { name: web }\n" }] },
        },
      ),
    );
    const upToRunning = eventsOf(await eventsUntil(runner.client, sessionId, isStatus("running")));
    expect(upToRunning.at(-1)).toEqual({ type: "status", status: { kind: "running", endpoints: [{ host: "", port: 3000, protocol: "tcp" }] } });
    const [podName] = (await runner.sessionPods()).filter((name) => name.startsWith(`telo-watch-${sessionId}-`));
    const pod = await runner.core.readNamespacedPod({ name: podName!, namespace: SESSION_NAMESPACE });
    expect(pod.spec?.containers?.map((container) => container.name)).toEqual(["workspace", "app-web"]);
    const configMap = pod.spec?.volumes?.find((volume) => volume.name === "workspace-app")?.configMap?.name;
    expect((await runner.core.readNamespacedConfigMap({ name: configMap!, namespace: SESSION_NAMESPACE })).data).toBeDefined();

    const tree = await runner.client.workspaceTree(sessionId);
    expect(tree.files.map((file) => file.path)).toContain(WEB);
    expect(await runner.client.applyWorkspace(sessionId, { write: [{ path: "notes.md", content: "hello" }] })).toEqual({ written: 1, deleted: 0 });
    expect(await runner.client.workspaceFile(sessionId, "notes.md")).toEqual({ content: "hello", size: 5 });
    await eventsUntil(runner.client, sessionId, (event) => event.type === "run" && event.app === "web" && event.phase === "started");

    await runner.client.deleteSession(sessionId);
    expect(eventsOf(await eventsUntil(runner.client, sessionId)).at(-1)).toEqual({ type: "status", status: { kind: "stopped" } });
    await waitFor("the watch pod to be gone", async () => !(await runner.sessionPods()).includes(podName!) || undefined, 60_000);
  });

  // Past its deadline the kubelet ends every container (143) and fails the pod with reason
  // DeadlineExceeded: the session's end names the deadline, as a run session's does. The
  // deadline is lowered on the running pod (an update may lower it), so no TTL is waited out.
  it("ends past its pod's deadline naming the deadline, not the phase", async () => {
    const { sessionId } = await runner.client.createSession(
      kubeSessionBody(
        {},
        {
          mode: "watch",
          apps: [{ name: "web", entryRelativePath: WEB, ports: [], io: "tty" }],
          bundle: { entryRelativePath: WEB, files: [{ relativePath: WEB, contents: "kind: Telo.Application\nmetadata: { name: web }\n" }] },
        },
      ),
    );
    await eventsUntil(runner.client, sessionId, isStatus("running"));
    const [podName] = (await runner.sessionPods()).filter((name) => name.startsWith(`telo-watch-${sessionId}-`));
    // Read again on a 409: the kubelet may write the pod's status between the read and the update.
    await waitFor("the lowered deadline", async () => {
      const pod = await runner.core.readNamespacedPod({ name: podName!, namespace: SESSION_NAMESPACE });
      return runner.core
        .replaceNamespacedPod({ name: podName!, namespace: SESSION_NAMESPACE, body: { ...pod, spec: { ...pod.spec!, activeDeadlineSeconds: 1 } } })
        .then(() => true)
        .catch(() => undefined);
    });
    const end = eventsOf(await eventsUntil(runner.client, sessionId)).at(-1);
    expect(end).toEqual({ type: "status", status: { kind: "failed", message: "Pod was active on the node longer than the specified deadline" } });
    await waitFor("the watch pod to be gone", async () => !(await runner.sessionPods()).includes(podName!) || undefined, 60_000);
  });
});
