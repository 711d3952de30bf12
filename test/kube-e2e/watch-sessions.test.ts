/**
 * Watch sessions through the runner's two processes (docs/kubernetes.md "Watch pods"): a multi-app pod with its
 * workspace, reloads and container ends as run events, per-app terminals and their tags, app-set
 * changes, idle suspend and resume, stopped bring-ups, the co-resident agent, re-adoption after
 * a supervisor restart, and the one workspace-app ConfigMap all sessions share. Runs on the
 * simulated cluster in `npm test` and on the real one in `npm run test:cluster`, where the
 * kernel stand-in reloads on every workspace write as the real kernel's --watch does and takes
 * its per-app script from each app's manifest (test/cluster/standin.ts).
 *
 * Not covered here because the simulator cannot script them yet: stderr bytes after the attach
 * (the simulated container prints only at its start, before any attach), and a reload that
 * declares different ports (the simulated kernel always declares the container's spec ports;
 * test/kube/session/watch-session.test.ts covers that path with a stand-in kernel inspector).
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import type { RunEvent } from "../../src/contract/wire.ts";
import { waitFor } from "../support/wait.ts";
import { type ClusterRunner, ON_REAL_CLUSTER, SESSION_NAMESPACE, kubeSessionBody, startClusterRunner } from "../support/kube-runner.ts";
import { eventsOf, eventsUntil, framesUntilText, isStatus, textOf } from "../support/streams.ts";

const WEB = "web/telo.yaml";
const WORKER = "worker/telo.yaml";

/** A watch session of a tty app `web` (port 3000) and a streams app `worker`; `simulate` scripts either cluster. */
function watchBody(simulate: Record<string, string | number | boolean> = {}) {
  return kubeSessionBody(simulate, {
    mode: "watch",
    apps: [
      { name: "web", entryRelativePath: WEB, ports: [{ port: 3000, protocol: "tcp" }], io: "tty" },
      { name: "worker", entryRelativePath: WORKER, io: "streams" },
    ],
    bundle: {
      entryRelativePath: WEB,
      files: [
        { relativePath: WEB, contents: "kind: Telo.Application\nmetadata: { name: web }\n" },
        { relativePath: WORKER, contents: "kind: Telo.Application\nmetadata: { name: worker }\n" },
      ],
    },
  });
}

// A real pod takes seconds to go.
const GONE_MS = 60_000;

const watchPodsOf = async (runner: ClusterRunner, sessionId: string) =>
  (await runner.sessionPods()).filter((name) => name.startsWith(`telo-watch-${sessionId}-`));

/** The event as a run start, or undefined. */
const startOf = (event: RunEvent) => (event.type === "run" && event.phase === "started" ? event : undefined);

const isRun = (app: string, phase: string) => (event: RunEvent) => event.type === "run" && event.app === app && event.phase === phase;

describe(`watch sessions on the ${ON_REAL_CLUSTER ? "real" : "simulated"} cluster`, () => {
  let runner: ClusterRunner;
  const sessions: string[] = [];

  beforeAll(async () => {
    // The agent's image: the simulator scripts any; on the real node the kernel stand-in's.
    const agentImage = ON_REAL_CLUSTER ? (kubeSessionBody().config?.image ?? "") : "acme/agent:1";
    runner = await startClusterRunner({
      env: {
        RUNNER_WATCH_SESSIONS: "true",
        RUNNER_WATCH_IDLE_SECONDS: "1",
        RUNNER_WORKSPACE_CHECKPOINT_SECONDS: "1",
        RUNNER_APPS: JSON.stringify({ helper: { image: agentImage, port: 7000, env: { AGENT_TOKEN: "operator-secret" } } }),
      },
    });
  });
  const holders: AbortController[] = [];
  afterEach(async () => {
    for (const holder of holders.splice(0)) holder.abort();
    for (const id of sessions.splice(0)) await runner.client.deleteSession(id);
  });
  afterAll(async () => {
    // No test leaves a pod behind.
    await waitFor("every session pod to be gone", async () => (await runner.sessionPods()).length === 0 || undefined, GONE_MS);
    await runner?.close();
  });

  /**
   * A watch session for the test. Unless `idle`, one event stream stays subscribed until the
   * test ends, so the idle window (1 s here) cannot suspend it between two steps.
   */
  async function create(
    simulate: Record<string, string | number | boolean> = {},
    extra: Record<string, unknown> = {},
    options: { idle?: boolean } = {},
  ): Promise<string> {
    const { sessionId } = await runner.client.createSession({ ...watchBody(simulate), ...extra });
    sessions.push(sessionId);
    if (!options.idle) hold(sessionId);
    return sessionId;
  }

  /** Keeps one event stream of the session subscribed until the test ends. */
  function hold(sessionId: string): void {
    const holder = new AbortController();
    holders.push(holder);
    void (async () => {
      for await (const _ of runner.client.events(sessionId, { signal: holder.signal })) {
        // Only the subscription matters.
      }
    })().catch(() => undefined);
  }

  it("brings up one pod for every app, seeds the workspace, serves it and reloads on request", async () => {
    const sessionId = await create({ listen: true });
    const upToRunning = eventsOf(await eventsUntil(runner.client, sessionId, isStatus("running")));
    expect(upToRunning).toContainEqual({ type: "progress", phase: "boot", message: "Starting workspace" });
    expect(upToRunning.at(-1)).toEqual({ type: "status", status: { kind: "running", endpoints: [{ host: "", port: 3000, protocol: "tcp" }] } });
    const [podName] = await watchPodsOf(runner, sessionId);
    const pod = await runner.core.readNamespacedPod({ name: podName!, namespace: SESSION_NAMESPACE });
    expect(pod.spec?.containers?.map((container) => container.name)).toEqual(["workspace", "app-web", "app-worker"]);

    // The bundle and the marker were seeded; the workspace surface answers through /v1.
    const tree = await runner.client.workspaceTree(sessionId);
    expect(tree.files.map((file) => file.path)).toEqual(["telo-workspace.yaml", WEB, WORKER]);
    // Current kernels take the comment-only marker (docs/telo-versions.md).
    expect((await runner.client.workspaceFile(sessionId, "telo-workspace.yaml")).content).toMatch(/^# Marks the root of this session's workspace\.\n(#.*\n)*$/);
    // Written once web's kernel runs, so that it sees the write (a real kernel boots seconds after the seed).
    await eventsUntil(runner.client, sessionId, isRun("web", "started"));
    expect(await runner.client.applyWorkspace(sessionId, { write: [{ path: "notes.md", content: "hello" }] })).toEqual({ written: 1, deleted: 0 });
    expect(await runner.client.workspaceFile(sessionId, "notes.md")).toEqual({ content: "hello", size: 5 });

    // The write starts web's next generation (a real kernel notices it within its poll), before
    // the manual reload, so that the two are not seen as one change.
    await eventsUntil(runner.client, sessionId, (event) => startOf(event)?.app === "web" && startOf(event)?.generation === 2);

    // Each app's kernel runs its first generation; a reload of `web` starts its next one, manually.
    await eventsUntil(runner.client, sessionId, isRun("worker", "started"));
    expect(await runner.client.reload(sessionId, "web")).toEqual({ reloaded: ["web"] });
    const events = eventsOf(await eventsUntil(runner.client, sessionId, (event) => startOf(event)?.app === "web" && startOf(event)?.trigger === "manual"));
    const webStarts = events.flatMap((event) => (startOf(event)?.app === "web" ? [startOf(event)!] : []));
    // Generation 1 at creation, 2 for the notes.md write (the kernel watches every file), 3 for the reload.
    expect(webStarts.map((start) => [start.generation, start.trigger])).toEqual([
      [1, "initial"],
      [2, "watch"],
      [3, "manual"],
    ]);
    // Reachability is checked once the kernel reports its ports, in its own time.
    await eventsUntil(runner.client, sessionId, (event) => event.type === "reachability" && event.app === "web" && event.state === "reachable");

    // Each app has its own terminal: the tty app's bytes are tagged tty, the streams app's stdout.
    const web = runner.client.terminal(sessionId, { app: "web" });
    await web.send("hello web\r");
    const webFrames = await framesUntilText(web, "hello web");
    expect(new Set(webFrames.flatMap((frame) => (frame.kind === "bytes" ? [frame.tag] : [])))).toEqual(new Set(["tty"]));
    web.close();
    const worker = runner.client.terminal(sessionId, { app: "worker" });
    await worker.send("hello worker\n");
    const workerFrames = await framesUntilText(worker, "hello worker");
    expect(workerFrames.filter((frame) => frame.kind === "bytes").map((frame) => frame.kind === "bytes" && frame.tag)).toContain("stdout");
    expect(textOf(workerFrames)).toContain("hello worker");
    worker.close();

    await runner.client.deleteSession(sessionId);
    expect(eventsOf(await eventsUntil(runner.client, sessionId)).at(-1)).toEqual({ type: "status", status: { kind: "stopped" } });
    await waitFor("the watch pod to be gone", async () => (await watchPodsOf(runner, sessionId)).length === 0 || undefined, GONE_MS);
  });

  it("reports an app container that exits as that app's run outcome, and the session stays running", async () => {
    const sessionId = await create({ "exit-code.app-worker": 3, "run-ms.app-worker": 1500 });
    await eventsUntil(runner.client, sessionId, isStatus("running"));
    const events = eventsOf(
      await eventsUntil(runner.client, sessionId, (event) => event.type === "run" && event.app === "worker" && event.phase !== "started"),
    );
    // The kernel's own Stopped frame or, when the container died without one, the pod watch
    // (onRunEnded) closes the generation: exactly one terminal run event either way.
    const end = events.at(-1);
    expect([
      { type: "run", app: "worker", generation: 1, phase: "completed", code: 3, durationMs: expect.any(Number) },
      { type: "run", app: "worker", generation: 1, phase: "failed", reason: "application container Error (exit code 3)" },
    ]).toContainEqual(end);
    await waitFor("the worker container to be reported terminated", async () => {
      const pod = (await runner.core.listNamespacedPod({ namespace: SESSION_NAMESPACE, labelSelector: `telo.run/session-id=${sessionId}` })).items[0];
      return pod?.status?.containerStatuses?.find((status) => status.name === "app-worker")?.state?.terminated !== undefined || undefined;
    });
    const document = await runner.client.getSession(sessionId);
    expect(document.status.kind).toBe("running");
    // The web app is untouched and its workspace still answers.
    expect((await runner.client.workspaceTree(sessionId)).files.length).toBe(3);
    // Later events (a reload of web) come after no second outcome for the worker's generation.
    await runner.client.reload(sessionId, "web");
    const after = eventsOf(await eventsUntil(runner.client, sessionId, (event) => startOf(event)?.trigger === "manual"));
    expect(after.filter((event) => event.type === "run" && event.app === "worker" && event.phase !== "started")).toHaveLength(1);
    expect(after.filter(isStatus("running"))).toHaveLength(1);
  });

  it("recreates the pod under a new name for a new app set, with the workspace preserved", async () => {
    const sessionId = await create();
    await eventsUntil(runner.client, sessionId, isStatus("running"));
    const [before] = await watchPodsOf(runner, sessionId);
    await runner.client.applyWorkspace(sessionId, { write: [{ path: "admin/telo.yaml", content: "kind: Telo.Application\n" }] });

    const apps = [
      { name: "web", entryRelativePath: WEB, ports: [{ port: 3000, protocol: "tcp" as const }, { port: 3001, protocol: "tcp" as const }], io: "tty" as const },
      { name: "admin", entryRelativePath: "admin/telo.yaml", io: "streams" as const },
    ];
    expect(await runner.client.setApps(sessionId, { apps })).toEqual({ apps: ["web", "admin"] });
    let runningSeen = 0;
    let adminStarted = false;
    const events = eventsOf(
      await eventsUntil(runner.client, sessionId, (event) => {
        if (isStatus("running")(event)) runningSeen += 1;
        adminStarted ||= startOf(event)?.app === "admin";
        return runningSeen === 2 && adminStarted;
      }),
    );
    expect(events.filter(isStatus("running")).at(-1)).toEqual({
      type: "status",
      status: { kind: "running", endpoints: [{ host: "", port: 3000, protocol: "tcp" }, { host: "", port: 3001, protocol: "tcp" }] },
    });
    expect(events.find((event) => startOf(event)?.app === "admin")).toMatchObject({ generation: 1, trigger: "resume" });

    const pods = await watchPodsOf(runner, sessionId);
    expect(pods).toHaveLength(1);
    expect(pods[0]).not.toBe(before);
    const pod = await runner.core.readNamespacedPod({ name: pods[0]!, namespace: SESSION_NAMESPACE });
    expect(pod.spec?.containers?.map((container) => container.name)).toEqual(["workspace", "app-web", "app-admin"]);
    expect((await runner.client.workspaceTree(sessionId)).files.map((file) => file.path)).toEqual(["admin/telo.yaml", "telo-workspace.yaml", WEB, WORKER]);
    expect((await runner.client.getSession(sessionId)).apps.map((app) => app.name)).toEqual(["web", "admin"]);
  });

  it("suspends an idle session by deleting its pod and resumes it in a new pod with its files back", async () => {
    const sessionId = await create({}, {}, { idle: true });
    await eventsUntil(runner.client, sessionId, isStatus("running"));
    await runner.client.applyWorkspace(sessionId, { write: [{ path: "draft.txt", content: "kept across suspend" }] });
    // Nobody is subscribed now: after the idle window the watch supervisor suspends it.
    await waitFor("the session to be suspended", async () => (await runner.client.getSession(sessionId)).status.kind === "suspended" || undefined, 20_000);
    expect(await watchPodsOf(runner, sessionId)).toEqual([]);

    expect(await runner.client.resume(sessionId)).toEqual({ sessionId });
    let suspended = false;
    const events = eventsOf(
      await eventsUntil(runner.client, sessionId, (event) => (suspended ||= isStatus("suspended")(event)) && isStatus("running")(event)),
    );
    expect(events.filter((event) => event.type === "status").map((event) => event.type === "status" && event.status.kind)).toEqual([
      "running",
      "suspended",
      "starting",
      "running",
    ]);
    expect(await watchPodsOf(runner, sessionId)).toHaveLength(1);
    expect(await runner.client.workspaceFile(sessionId, "draft.txt")).toEqual({ content: "kept across suspend", size: 19 });
    expect((await runner.client.workspaceFile(sessionId, WORKER)).content).toContain("name: worker");

    // However many sessions ran, they all mounted the one content-addressed ConfigMap.
    const configMaps = await runner.core.listNamespacedConfigMap({ namespace: SESSION_NAMESPACE });
    expect(configMaps.items.map((item) => item.metadata?.name).filter((name) => name?.startsWith("telo-workspace-app-"))).toHaveLength(1);
  });

  // Simulator-only: `exit-code.workspace` scripts the workspace container, which on the real node runs the workspace app's own manifest.
  if (!ON_REAL_CLUSTER) {
    it("fails a pod that ends before serving, and deletes it", async () => {
      const sessionId = await create({ "exit-code": 1, "exit-code.workspace": 1 });
      const end = eventsOf(await eventsUntil(runner.client, sessionId)).at(-1);
      expect(end).toEqual({ type: "status", status: { kind: "failed", message: "start: pod reached Failed before serving" } });
      await waitFor("the failed pod to be deleted", async () => (await watchPodsOf(runner, sessionId)).length === 0 || undefined);
    });
  }

  it("stops a session whose pod is still pulling its image, deleting the pod", async () => {
    // Every container's pull fails (plain keys script the app containers only on the simulator).
    const sessionId = await create({ "image-pull": "fail", "image-pull.workspace": "fail" });
    await eventsUntil(runner.client, sessionId, (event) => event.type === "progress" && event.message === "Pulling image");
    await runner.client.deleteSession(sessionId);
    expect(eventsOf(await eventsUntil(runner.client, sessionId)).at(-1)).toEqual({ type: "status", status: { kind: "stopped" } });
    await waitFor("the pod to be deleted", async () => (await watchPodsOf(runner, sessionId)).length === 0 || undefined, GONE_MS);
  });

  it("re-adopts a live watch session after the supervisor is killed, and sweeps stale workspace ConfigMaps at boot", async () => {
    const sessionId = await create();
    await eventsUntil(runner.client, sessionId, isStatus("running"));
    await runner.client.applyWorkspace(sessionId, { write: [{ path: "before-restart.txt", content: "still here" }] });
    const [pod] = await watchPodsOf(runner, sessionId);
    const stale = "telo-workspace-app-000000000000";
    await runner.core.createNamespacedConfigMap({
      namespace: SESSION_NAMESPACE,
      body: { metadata: { name: stale, labels: { "app.kubernetes.io/managed-by": "telo-k8s-runner" } }, data: { "telo.yaml": "old" } },
    });

    await runner.stopSupervisor("SIGKILL");
    await runner.startSupervisor();
    // The re-adopted session is idle from its creation time on: subscribe again at once.
    hold(sessionId);

    await waitFor("the session to run again", async () => (await runner.client.getSession(sessionId).catch(() => undefined))?.status.kind === "running" || undefined);
    expect(await watchPodsOf(runner, sessionId)).toEqual([pod]);
    expect(await runner.client.workspaceFile(sessionId, "before-restart.txt")).toEqual({ content: "still here", size: 10 });
    expect((await runner.client.getSession(sessionId)).apps.map((app) => [app.name, app.io])).toEqual([["web", "tty"], ["worker", "streams"]]);
    // The adopted session relays its kernels again: a reload is seen as a run.
    await runner.client.reload(sessionId, "worker");
    await eventsUntil(runner.client, sessionId, (event) => startOf(event)?.app === "worker" && startOf(event)?.trigger === "manual");

    const names = (await runner.core.listNamespacedConfigMap({ namespace: SESSION_NAMESPACE })).items.map((item) => item.metadata?.name);
    expect(names).not.toContain(stale);
    expect(names.filter((name) => name?.startsWith("telo-workspace-app-"))).toHaveLength(1);
  });

  it("runs the co-resident agent beside the apps and reports its endpoint apart from theirs", async () => {
    const sessionId = await create({}, { agent: "helper", env: { APP_SETTING: "on" } });
    const running = eventsOf(await eventsUntil(runner.client, sessionId, isStatus("running"))).at(-1);
    expect(running).toEqual({
      type: "status",
      status: { kind: "running", endpoints: [{ host: "", port: 3000, protocol: "tcp" }], agent: { host: "", port: 7000, protocol: "tcp" } },
    });
    const [podName] = await watchPodsOf(runner, sessionId);
    const pod = await runner.core.readNamespacedPod({ name: podName!, namespace: SESSION_NAMESPACE });
    const containers = new Map((pod.spec?.containers ?? []).map((container) => [container.name, container]));
    expect([...containers.keys()]).toEqual(["workspace", "app-web", "app-worker", "agent"]);
    // Operator env only on the agent, session env only on the apps, neither on the workspace.
    const envNames = (name: string) => (containers.get(name)?.env ?? []).map((variable) => variable.name);
    expect(envNames("agent")).toContain("AGENT_TOKEN");
    expect(envNames("app-web")).toContain("APP_SETTING");
    expect([...envNames("workspace"), ...envNames("app-web")]).not.toContain("AGENT_TOKEN");
    expect(envNames("workspace")).not.toContain("APP_SETTING");
  });
});
