/**
 * The two-process split under failure: the api process holds no state, and a missing
 * supervisor is answered with 503 at once rather than a hang (docs/architecture.md).
 */
import { describe, expect, it } from "vitest";
import { runnerForSuite } from "../support/suite-runner.ts";
import { sessionBody } from "../support/session-body.ts";
import { eventsOf, eventsUntil, framesUntilText, textOf } from "../support/streams.ts";

describe("process failures", () => {
  const runner = runnerForSuite();

  it("loses nothing when the api process is killed: a new one serves the same sessions and history", async () => {
    const { sessionId } = await runner.client.createSession(sessionBody({ script: { output: "before the crash\r\n" } }));
    const before = eventsOf(await eventsUntil(runner.client, sessionId, (event) => event.type === "status"));
    await runner.stopApi("SIGKILL");
    await runner.startApi();
    expect((await runner.client.getSession(sessionId)).status.kind).toBe("running");
    expect(eventsOf(await eventsUntil(runner.client, sessionId, (event) => event.type === "status"))).toEqual(before);
    const terminal = runner.client.terminal(sessionId);
    await terminal.send("after\n");
    expect(textOf(await framesUntilText(terminal, "after"))).toContain("before the crash");
    terminal.close();
    await runner.client.deleteSession(sessionId);
  });

  it("keeps a reconnecting event reader going across an api restart, without repeats", async () => {
    const { sessionId } = await runner.client.createSession(sessionBody());
    const seen: number[] = [];
    const reading = (async () => {
      for await (const item of runner.client.events(sessionId, { maxReconnectDelayMs: 200 })) if ("id" in item) seen.push(item.id);
    })();
    await new Promise((resolve) => setTimeout(resolve, 300));
    await runner.stopApi("SIGKILL");
    await runner.startApi();
    const terminal = runner.client.terminal(sessionId);
    await terminal.send("!exit 4\n");
    await reading;
    expect(seen).toEqual([1, 2]);
  });

  it("answers 503 while the supervisor is down and recovers when it is back", async () => {
    await runner.stopSupervisor("SIGKILL");
    const response = await fetch(`${runner.baseUrl}/v1/sessions`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify(sessionBody()),
    });
    expect(response.status).toBe(503);
    expect(await response.json()).toEqual({
      error: "supervisor_unavailable",
      message: "the runner's supervisor process is not reachable; retry shortly",
    });
    expect((await fetch(`${runner.baseUrl}/v1/sessions/abc/events`)).status).toBe(503);
    expect((await fetch(`${runner.baseUrl}/v1/health`)).status).toBe(200);
    expect(await runner.client.terminal("abc").closed).toEqual({ code: 1011, reason: "supervisor unavailable" });

    await runner.startSupervisor();
    const { sessionId } = await runner.client.createSession(sessionBody());
    expect((await runner.client.getSession(sessionId)).sessionId).toBe(sessionId);
  });

  it("closes an open terminal with a retryable code when the supervisor dies under it", async () => {
    const { sessionId } = await runner.client.createSession(sessionBody());
    const terminal = runner.client.terminal(sessionId);
    await terminal.send("hi\n");
    await framesUntilText(terminal, "hi");
    await runner.stopSupervisor("SIGKILL");
    expect(await terminal.closed).toEqual({ code: 1011, reason: "supervisor unavailable" });
    await runner.startSupervisor();
  });

  it("refuses a supervisor of another internal protocol version with a clear 503", async () => {
    const { createServer } = await import("node:http2");
    const { rm } = await import("node:fs/promises");
    await runner.stopSupervisor();
    await rm(runner.socketPath, { force: true });
    const impostor = createServer((_request, response) => {
      response.writeHead(200, { "content-type": "application/json", "x-k8s-runner-internal-protocol": "999" }).end("{}");
    });
    const sessions = new Set<import("node:http2").ServerHttp2Session>();
    impostor.on("session", (session) => sessions.add(session.on("error", () => undefined)));
    await new Promise<void>((resolve) => impostor.listen(runner.socketPath, resolve));
    try {
      const response = await fetch(`${runner.baseUrl}/v1/sessions/abc`);
      expect(response.status).toBe(503);
      expect(((await response.json()) as { message: string }).message).toContain("speaks internal protocol '999'");
    } finally {
      for (const session of sessions) session.destroy();
      await new Promise((resolve) => impostor.close(resolve));
      await runner.startSupervisor();
    }
  });
});
