/**
 * The `/v1` routes mounted under a prefix in another Hono server, WebSocket included, in
 * front of a real supervisor process.
 */
import type { AddressInfo } from "node:net";
import { serve } from "@hono/node-server";
import { createNodeWebSocket } from "@hono/node-ws";
import { Hono } from "hono";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { RunnerClient, SupervisorClient, createRunnerRoutes } from "../../src/index.ts";
import { type RunnerUnderTest, startRunner } from "../support/processes.ts";
import { sessionBody } from "../support/session-body.ts";
import { framesUntilText, textOf } from "../support/streams.ts";

describe("embedding the routes", () => {
  let runner: RunnerUnderTest;
  let host: ReturnType<typeof serve>;
  let supervisor: SupervisorClient;
  let client: RunnerClient;

  beforeAll(async () => {
    runner = await startRunner();
    supervisor = new SupervisorClient(runner.socketPath);
    const app = new Hono();
    const { injectWebSocket, upgradeWebSocket } = createNodeWebSocket({ app });
    app.get("/", (c) => c.text("the host's own page"));
    app.route("/runner", createRunnerRoutes({ supervisor, corsOrigins: undefined, version: "embedded", upgradeWebSocket }));
    host = serve({ fetch: app.fetch, port: 0, hostname: "127.0.0.1" });
    injectWebSocket(host);
    await new Promise((resolve) => host.once("listening", resolve));
    client = new RunnerClient(`http://127.0.0.1:${(host.address() as AddressInfo).port}/runner`);
  });

  afterAll(async () => {
    await new Promise((resolve) => host.close(resolve));
    await supervisor.close();
    await runner.close();
  });

  it("serves /v1 under /runner next to the host's own routes, SSE and WebSocket included", async () => {
    expect(await client.health()).toEqual({ ok: true, version: "embedded" });
    const { sessionId, streamUrl } = await client.createSession(sessionBody());
    expect(streamUrl).toBe(`/v1/sessions/${sessionId}/events`);
    const terminal = client.terminal(sessionId);
    await terminal.send("through the host\n");
    expect(textOf(await framesUntilText(terminal, "through the host"))).toContain("through the host");
    terminal.close();
    await client.deleteSession(sessionId);
    const events = [];
    for await (const item of client.events(sessionId)) events.push(item);
    expect(events.at(-1)).toMatchObject({ event: { type: "status", status: { kind: "stopped" } } });
    // The session is the supervisor's: the standalone api sees it too.
    expect((await runner.client.getSession(sessionId)).status).toEqual({ kind: "stopped" });
  });
});
