/**
 * Session lifecycle through both processes: start failures on the stream, stop and its
 * pre-start race, capacity and eviction, capabilities and probe (docs/api.md).
 */
import { describe, expect, it } from "vitest";
import { RunnerError } from "../../src/client/index.ts";
import { runnerForSuite } from "../support/suite-runner.ts";
import { sessionBody } from "../support/session-body.ts";
import { eventsOf, eventsUntil, isStatus } from "../support/streams.ts";

describe("lifecycle", () => {
  const runner = runnerForSuite({
      env: {
        RUNNER_MAX_SESSIONS: "3",
        RUNNER_APPS: JSON.stringify({ tool: { image: "acme/tool:1", title: "Acme tool", env: { SECRET: "s3cret" } }, bare: { image: "acme/bare:1" } }),
      },
    });

  const stopAll = async () => {
    // Free capacity for the next test: stop live sessions; terminal ones are reclaimable.
    for (const id of liveIds.splice(0)) await runner.client.deleteSession(id);
  };
  const liveIds: string[] = [];

  it("reports a start failure only on the stream, with its stage", async () => {
    const { sessionId } = await runner.client.createSession(sessionBody({ script: { startError: { stage: "create", message: "no such image" } } }));
    const events = eventsOf(await eventsUntil(runner.client, sessionId));
    expect(events).toEqual([{ type: "status", status: { kind: "failed", message: "create: no such image" } }]);
    const document = await runner.client.getSession(sessionId);
    expect(document.status).toEqual({ kind: "failed", message: "create: no such image" });
    expect(document.exitedAt).toBeDefined();
  });

  it("stops a running session and reports stopped; unknown ids are 204", async () => {
    const { sessionId } = await runner.client.createSession(sessionBody());
    await eventsUntil(runner.client, sessionId, isStatus("running"));
    const response = await fetch(`${runner.baseUrl}/v1/sessions/${sessionId}`, { method: "DELETE" });
    expect(response.status).toBe(204);
    expect(eventsOf(await eventsUntil(runner.client, sessionId)).at(-1)).toEqual({ type: "status", status: { kind: "stopped" } });
    expect((await fetch(`${runner.baseUrl}/v1/sessions/nope`, { method: "DELETE" })).status).toBe(204);
    await expect(runner.client.getSession("nope")).rejects.toMatchObject({ status: 404, body: { error: "not_found", message: "session 'nope' not in registry" } });
  });

  it("stops a workload that materialises after a DELETE during its start", async () => {
    const { sessionId } = await runner.client.createSession(sessionBody({ script: { startDelayMs: 400 } }));
    await runner.client.deleteSession(sessionId);
    const events = eventsOf(await eventsUntil(runner.client, sessionId));
    expect(events.at(-1)).toEqual({ type: "status", status: { kind: "stopped" } });
  });

  it("answers 500 stop_failed when the backend cannot stop", async () => {
    const { sessionId } = await runner.client.createSession(sessionBody({ script: { stopError: "cluster said no" } }));
    await eventsUntil(runner.client, sessionId, isStatus("running"));
    const response = await fetch(`${runner.baseUrl}/v1/sessions/${sessionId}`, { method: "DELETE" });
    expect(response.status).toBe(500);
    // The backend's own words stay in the log.
    expect(await response.json()).toEqual({ error: "stop_failed", message: "stopping the session failed; retry the DELETE" });
    liveIds.push(sessionId);
    const terminal = runner.client.terminal(sessionId);
    await terminal.send("!exit 0\n");
    await terminal.closed;
    liveIds.pop();
  });

  it("evicts the oldest terminal session at capacity and never a live one", async () => {
    await stopAll();
    // Fill the registry: whatever earlier tests left is terminal, so make three live ones.
    for (let i = 0; i < 3; i += 1) liveIds.push((await runner.client.createSession(sessionBody())).sessionId);
    const refused = await runner.client.createSession(sessionBody()).catch((error: RunnerError) => error);
    expect(refused).toBeInstanceOf(RunnerError);
    expect((refused as RunnerError).status).toBe(409);
    expect((refused as RunnerError).body).toEqual({ error: "too_many_sessions", message: "runner is at its configured max of 3 concurrent sessions" });

    const ended = liveIds.shift()!;
    await runner.client.deleteSession(ended);
    await eventsUntil(runner.client, ended);
    const admitted = await runner.client.createSession(sessionBody());
    liveIds.push(admitted.sessionId);
    await expect(runner.client.getSession(ended)).rejects.toMatchObject({ status: 404 });
    expect((await fetch(`${runner.baseUrl}/v1/sessions/${ended}/events`)).status).toBe(404);
    expect(await runner.client.terminal(ended).closed).toMatchObject({ code: 4404 });
    await stopAll();
  });

  it("describes itself: features, config schema, apps without images or env", async () => {
    const capabilities = await runner.client.capabilities();
    expect(capabilities.features).toEqual({ io: ["tty", "streams"], ports: true, watch: false });
    expect(capabilities.apps).toEqual([{ name: "tool", title: "Acme tool" }, { name: "bare" }]);
    expect(JSON.stringify(capabilities)).not.toContain("acme/");
    expect(JSON.stringify(capabilities)).not.toContain("s3cret");
    expect(capabilities.terms).toBeUndefined();
    const schema = (capabilities.config as { schema: { properties: Record<string, Record<string, unknown>> } }).schema;
    expect(schema.properties.image).toMatchObject({ type: "string", minLength: 1, default: "telorun/node:test" });
    expect(schema.properties.image?.readOnly).toBeUndefined();
    expect(schema.properties.registryUrl).toMatchObject({ type: "string", title: "Registry URL" });
  });

  it("probes: ready, unavailable as a 200 report, malformed config as 400", async () => {
    expect(await runner.client.probe({ image: "x", pullPolicy: "missing" })).toEqual({ status: "ready" });
    expect(await runner.client.probe({ image: "unavailable", pullPolicy: "missing" })).toEqual({
      status: "unavailable",
      message: "backend unavailable",
      remediation: "start it",
    });
    // The real client sends its whole config, registryUrl included: extras are stripped.
    const extras = await fetch(`${runner.baseUrl}/v1/probe`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ config: { image: "x", pullPolicy: "missing", registryUrl: "https://r" }, more: 1 }),
    });
    expect(extras.status).toBe(200);
    for (const body of [{}, { config: { image: "x", pullPolicy: "sometimes" } }]) {
      const response = await fetch(`${runner.baseUrl}/v1/probe`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify(body),
      });
      expect(response.status).toBe(400);
    }
  });

  it("projects run outcomes from debug frames of a run session with inspect", async () => {
    const { sessionId } = await runner.client.createSession(sessionBody({}, { inspect: true }));
    liveIds.push(sessionId);
    const terminal = runner.client.terminal(sessionId);
    const frame = (event: string, payload?: unknown) => JSON.stringify({ kind: "event", timestamp: "2026-01-01T00:00:00Z", event, payload });
    await terminal.send(
      [
        `!debug ${frame("Kernel.Starting")}`,
        `!debug ${JSON.stringify({ kind: "log", timestamp: "t", stream: "stdout", line: "not relayed" })}`,
        `!debug ${frame("Kernel.Stopped", { exitCode: 2 })}`,
        `!debug ${frame("Kernel.RunFailed", { code: "E_LOAD" })}`,
        "",
      ].join("\n"),
    );
    const items = await eventsUntil(runner.client, sessionId, (event) => event.type === "run" && event.phase === "failed");
    const runEvents = eventsOf(items).filter((event) => event.type === "run" || event.type === "debug");
    expect(runEvents.map((event) => (event.type === "run" ? `${event.phase}:${event.generation}` : `debug:${event.frame.event}`))).toEqual([
      "debug:Kernel.Starting",
      "started:1",
      "debug:Kernel.Stopped",
      "completed:1",
      "debug:Kernel.RunFailed",
      "started:2",
      "failed:2",
    ]);
    expect(runEvents[1]).toEqual({ type: "run", app: "app", generation: 1, phase: "started", trigger: "initial" });
    expect(runEvents[5]).toMatchObject({ trigger: "watch" });
    expect(runEvents[6]).toEqual({ type: "run", app: "app", generation: 2, phase: "failed", reason: "E_LOAD" });
    expect((await runner.client.getSession(sessionId)).apps[0]?.generation).toBe(2);
    terminal.close();
    await stopAll();
  });

  it("applies endpoint changes to the session document before announcing them", async () => {
    const { sessionId } = await runner.client.createSession(sessionBody({}, { ports: [{ port: 3000, protocol: "tcp" }] }));
    liveIds.push(sessionId);
    const terminal = runner.client.terminal(sessionId);
    await terminal.send(`!endpoints ${JSON.stringify({ added: [{ host: "", port: 4000, protocol: "tcp" }], removed: [{ host: "", port: 3000, protocol: "tcp" }] })}\n`);
    await eventsUntil(runner.client, sessionId, (event) => event.type === "endpoints");
    expect((await runner.client.getSession(sessionId)).apps[0]?.ports).toEqual([{ port: 4000, protocol: "tcp" }]);
    terminal.close();
    await stopAll();
  });
});
