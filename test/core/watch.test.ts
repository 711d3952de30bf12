/**
 * Watch sessions through both processes: admission, the workspace surface, reloads and the
 * shared budget, app-set changes, idle suspend with a checkpoint, and resume (docs/api.md
 * "Watch sessions").
 */
import { describe, expect, it } from "vitest";
import { type RunnerUnderTest } from "../support/processes.ts";
import { runnerForSuite } from "../support/suite-runner.ts";
import { sessionBody } from "../support/session-body.ts";
import { waitFor } from "../support/wait.ts";
import { eventsOf, eventsUntil, framesUntilText, isStatus } from "../support/streams.ts";

async function call(runner: RunnerUnderTest, method: string, path: string, body?: unknown) {
  const response = await fetch(`${runner.baseUrl}${path}`, {
    method,
    ...(body !== undefined && { headers: { "content-type": "application/json" }, body: JSON.stringify(body) }),
  });
  const text = await response.text();
  return { status: response.status, body: text ? JSON.parse(text) : undefined };
}

const watchBody = (overrides: Record<string, unknown> = {}, script: Record<string, unknown> = {}) =>
  sessionBody({ script: script }, { mode: "watch", ...overrides });

describe("watch sessions", () => {
  const runner = runnerForSuite({
      env: {
        RUNNER_WATCH_SESSIONS: "true",
        RUNNER_WATCH_MAX_SESSIONS: "3",
        RUNNER_WATCH_RELOAD_LIMIT: "3",
        RUNNER_WATCH_IDLE_SECONDS: "1",
        RUNNER_WORKSPACE_CHECKPOINT_SECONDS: "1",
        TEST_WATCH_TICK_MS: "100",
        RUNNER_APPS: JSON.stringify({ "authoring-agent": { image: "acme/agent:1", port: 7000 }, portless: { image: "acme/p:1" } }),
      },
    });

  it("advertises watch and the agents that declare a port", async () => {
    expect((await runner.client.capabilities()).features).toEqual({
      io: ["tty", "streams"],
      ports: true,
      watch: true,
      agents: ["authoring-agent"],
    });
  });

  it("checks agents: unknown, portless, and the app that declares the agent's port wins", async () => {
    expect((await call(runner, "POST", "/v1/sessions", watchBody({ agent: "nope" }))).body).toEqual({
      error: "unknown_agent",
      message: "agent 'nope' is not offered by this runner — offered: authoring-agent",
    });
    const portless = await call(runner, "POST", "/v1/sessions", watchBody({ agent: "portless" }));
    expect(portless.body.error).toBe("agent_port_undeclared");
    expect(portless.body.message).toContain("RUNNER_APPS.portless.port");

    const clash = await call(
      runner,
      "POST",
      "/v1/sessions",
      watchBody({ agent: "authoring-agent", apps: [{ name: "web", entryRelativePath: "telo.yaml", ports: [{ port: 7000, protocol: "tcp" }] }] }),
    );
    expect(clash.status).toBe(201);
    const [first] = eventsOf(await eventsUntil(runner.client, clash.body.sessionId, () => true));
    expect(first).toEqual({
      type: "progress",
      phase: "provision",
      message: "co-resident agent 'authoring-agent' was not started: it listens on tcp port 7000, which app 'web' declares",
    });
    expect((await runner.client.getSession(clash.body.sessionId)).agent).toBeUndefined();
    await runner.client.deleteSession(clash.body.sessionId);

    const kept = await runner.client.createSession(watchBody({ agent: "authoring-agent" }));
    expect((await runner.client.getSession(kept.sessionId)).agent).toBe("authoring-agent");
    await runner.client.deleteSession(kept.sessionId);
  });

  it("refuses watch routes on a run session and unknown ids", async () => {
    const run = await runner.client.createSession(sessionBody());
    for (const [method, path] of [
      ["GET", "/workspace"],
      ["GET", "/workspace/file?path=a"],
      ["POST", "/reload"],
    ] as const) {
      expect(await call(runner, method, `/v1/sessions/${run.sessionId}${path}`)).toEqual({
        status: 409,
        body: { error: "not_a_watch_session", message: "this surface exists only on a watch session" },
      });
      expect((await call(runner, method, `/v1/sessions/nope${path}`)).status).toBe(404);
    }
    expect(await call(runner, "POST", `/v1/sessions/${run.sessionId}/resume`)).toEqual({
      status: 404,
      body: { error: "not_suspended", message: `session '${run.sessionId}' is not suspended` },
    });
    await runner.client.deleteSession(run.sessionId);
  });

  it("serves the workspace, reloads with a shared per-minute budget, and validates paths", async () => {
    const { sessionId } = await runner.client.createSession(
      watchBody({ apps: [{ name: "web", entryRelativePath: "telo.yaml" }, { name: "worker", entryRelativePath: "w.yaml", io: "streams" }] }),
    );
    await eventsUntil(runner.client, sessionId, isStatus("running"));
    expect((await runner.client.workspaceTree(sessionId)).files.map((file) => file.path)).toEqual(["telo.yaml"]);
    expect(await runner.client.applyWorkspace(sessionId, { write: [{ path: "/notes.txt", content: "hi" }] })).toEqual({ written: 1, deleted: 0 });
    expect(await runner.client.workspaceFile(sessionId, "/notes.txt")).toEqual({ content: "hi", size: 2 });
    expect(await call(runner, "GET", `/v1/sessions/${sessionId}/workspace/file`)).toEqual({
      status: 400,
      body: { error: "invalid_path", message: "?path= is required" },
    });
    expect((await call(runner, "POST", `/v1/sessions/${sessionId}/workspace`, { write: [{ path: "../x", content: "" }] })).body).toEqual({
      error: "invalid_path",
      message: "invalid bundle relativePath '../x'",
    });
    expect(await call(runner, "POST", `/v1/sessions/${sessionId}/reload?app=nope`)).toEqual({
      status: 404,
      body: { error: "unknown_app", message: "session runs no app named 'nope'" },
    });
    // Three admitted requests used the budget of 3: the next is limited.
    expect(await call(runner, "POST", `/v1/sessions/${sessionId}/reload`)).toEqual({ status: 429, body: { error: "reload_rate_limited", message: "more than 3 reloads in the last minute" } });
    await runner.client.deleteSession(sessionId);
  });

  it("answers resize on a streams app with an error frame and requires ?app= with several apps", async () => {
    const { sessionId } = await runner.client.createSession(
      watchBody({ apps: [{ name: "web", entryRelativePath: "telo.yaml" }, { name: "worker", entryRelativePath: "w.yaml", io: "streams" }] }),
    );
    expect(await runner.client.terminal(sessionId).closed).toEqual({ code: 4404, reason: "session runs 2 apps — ?app= is required" });
    const worker = runner.client.terminal(sessionId, { app: "worker" });
    await worker.resize(80, 24);
    await worker.send("out\n");
    const frames = await framesUntilText(worker, "out");
    expect(frames[0]).toEqual({ kind: "control", message: { type: "seq", seq: 0, app: "worker", io: "streams" } });
    expect(frames).toContainEqual({ kind: "control", message: { type: "error", error: "resize_unsupported", io: "streams" } });
    expect(frames.find((frame) => frame.kind === "bytes")).toMatchObject({ tag: "stdout" });
    worker.close();
    await runner.client.deleteSession(sessionId);
  });

  it("reloads with a manual trigger and changes the app set", async () => {
    const { sessionId } = await runner.client.createSession(watchBody({ apps: [{ name: "web", entryRelativePath: "telo.yaml" }] }));
    await eventsUntil(runner.client, sessionId, isStatus("running"));
    expect(await runner.client.reload(sessionId)).toEqual({ reloaded: ["web"] });
    const started = eventsOf(await eventsUntil(runner.client, sessionId, (event) => event.type === "run" && event.phase === "completed"));
    expect(started.find((event) => event.type === "run")).toEqual({ type: "run", app: "web", generation: 1, phase: "started", trigger: "manual" });

    expect(await runner.client.setApps(sessionId, { apps: [{ name: "admin", entryRelativePath: "admin.yaml", ports: [{ port: 8080, protocol: "tcp" }] }] })).toEqual({ apps: ["admin"] });
    expect((await runner.client.getSession(sessionId)).apps).toEqual([{ name: "admin", io: "tty", generation: 0, ports: [{ port: 8080, protocol: "tcp" }] }]);
    expect((await call(runner, "PUT", `/v1/sessions/${sessionId}/apps`, { apps: [{ name: "Bad", entryRelativePath: "a" }] })).body.error).toBe("invalid_app_name");
    await runner.client.deleteSession(sessionId);
  });

  it("fails the session when the app set cannot be changed", async () => {
    const { sessionId } = await runner.client.createSession(watchBody({}, { setAppsError: "pod refused" }));
    await eventsUntil(runner.client, sessionId, isStatus("running"));
    expect(await call(runner, "PUT", `/v1/sessions/${sessionId}/apps`, { apps: [{ name: "web", entryRelativePath: "a.yaml" }] })).toEqual({
      status: 500,
      body: { error: "set_apps_failed", message: "changing the app set failed" },
    });
    const document = await runner.client.getSession(sessionId);
    expect(document.status).toEqual({ kind: "failed", message: "changing the app set failed" });
    expect(document.apps.map((app) => app.name)).toEqual(["app"]);
  });

  it("checkpoints while watched, suspends once idle, and resumes under the same id", async () => {
    const { sessionId } = await runner.client.createSession(watchBody());
    const terminal = runner.client.terminal(sessionId);
    await terminal.send("attached\n");
    await framesUntilText(terminal, "attached");
    await runner.client.applyWorkspace(sessionId, { write: [{ path: "kept.txt", content: "still here" }] });
    // Attached for longer than the idle window: checkpointed, never suspended.
    await new Promise((resolve) => setTimeout(resolve, 1500));
    expect((await runner.client.getSession(sessionId)).status.kind).toBe("running");
    terminal.close();
    await waitFor("the idle session to suspend", async () => (await runner.client.getSession(sessionId)).status.kind === "suspended" || undefined);
    const suspended = await runner.client.getSession(sessionId);
    expect(suspended.exitedAt).toBeUndefined();
    // Stdin is dropped and no workspace is live while suspended.
    expect((await call(runner, "GET", `/v1/sessions/${sessionId}/workspace`)).body).toEqual({ error: "not_running", message: "session has no live workspace" });

    // A terminal held open from here on keeps the resumed session watched, so the 1 s idle
    // window cannot suspend it again before the last check (its first frame: registered).
    const watcher = runner.client.terminal(sessionId);
    await watcher.frames().next();
    expect(await runner.client.resume(sessionId)).toEqual({ sessionId });
    let resumed = false;
    const events = eventsOf(
      await eventsUntil(runner.client, sessionId, (event) => {
        if (event.type === "status" && event.status.kind === "starting") resumed = true;
        return resumed && event.type === "status" && event.status.kind === "running";
      }),
    );
    expect(events.filter((event) => event.type === "status").map((event) => event.type === "status" && event.status.kind)).toEqual([
      "running",
      "suspended",
      "starting",
      "running",
    ]);
    expect(await runner.client.workspaceFile(sessionId, "kept.txt")).toEqual({ content: "still here", size: 10 });
    watcher.close();
    await runner.client.deleteSession(sessionId);
  });

  it("ends a suspended session on DELETE: it can no longer be resumed", async () => {
    const { sessionId } = await runner.client.createSession(watchBody());
    await waitFor("the idle session to suspend", async () => (await runner.client.getSession(sessionId)).status.kind === "suspended" || undefined);
    await runner.client.deleteSession(sessionId);
    const document = await runner.client.getSession(sessionId);
    expect(document.status).toEqual({ kind: "stopped" });
    expect(document.exitedAt).toBeDefined();
    expect((await call(runner, "POST", `/v1/sessions/${sessionId}/resume`)).status).toBe(404);
  });

  it("keeps a session up when its snapshot fails", async () => {
    const { sessionId } = await runner.client.createSession(watchBody({}, { snapshotError: "disk on fire" }));
    await eventsUntil(runner.client, sessionId, isStatus("running"));
    await new Promise((resolve) => setTimeout(resolve, 1500));
    expect((await runner.client.getSession(sessionId)).status.kind).toBe("running");
    expect((await call(runner, "POST", `/v1/sessions/${sessionId}/resume`)).status).toBe(404);
    await runner.client.deleteSession(sessionId);
  });

  it("caps live watch sessions; suspended ones do not count", async () => {
    const ids: string[] = [];
    for (let i = 0; i < 3; i += 1) ids.push((await runner.client.createSession(watchBody())).sessionId);
    expect(await call(runner, "POST", "/v1/sessions", watchBody())).toMatchObject({
      status: 409,
      body: { error: "too_many_watch_sessions", message: "runner is at its configured max of 3 concurrent watch sessions" },
    });
    for (const id of ids) await runner.client.deleteSession(id);
  });
});
