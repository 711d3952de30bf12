/**
 * The api-side hardening cases, each through the real processes (scripted backend): WebSocket frame
 * limit, nested JSON, env validation, error texts, duplicate vary, Node 20's missing ErrorEvent.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { capturedStderr } from "../support/processes.ts";
import { eventsUntil, isStatus } from "../support/streams.ts";
import { type Processes, openSocket, postJson, startProcesses } from "./support.ts";
import { sessionBody } from "../support/session-body.ts";

describe("api hardening", () => {
  let runner: Processes;
  beforeAll(async () => {
    runner = await startProcesses({ RUNNER_CORS_ORIGINS: "http://allowed.example" });
  });
  afterAll(() => runner.close());

  it("closes a terminal that sends a frame over 1 MiB with 1009, and logs no ReferenceError", async () => {
    const { sessionId } = await runner.client.createSession(sessionBody());
    await eventsUntil(runner.client, sessionId, isStatus("running"));
    const { socket, closed } = await openSocket(`ws://127.0.0.1:${runner.port}/v1/sessions/${sessionId}/io`, { origin: "http://allowed.example" });
    socket.send(Buffer.alloc(1024 * 1024 + 1, 0x61));
    expect((await closed).code).toBe(1009);
    // The api is still there and the session still takes a terminal.
    expect((await fetch(`${runner.baseUrl}/v1/health`)).status).toBe(200);
    const again = await openSocket(`ws://127.0.0.1:${runner.port}/v1/sessions/${sessionId}/io`, { origin: "http://allowed.example" });
    again.socket.send(Buffer.alloc(1024 * 1024, 0x61)); // exactly the limit is accepted
    again.socket.close(1000);
    expect((await again.closed).code).toBe(1000);
    expect(capturedStderr(runner.api())).not.toContain("ReferenceError");
    await runner.client.deleteSession(sessionId);
  });

  it("answers 400 for 10,000 levels of nesting inside config", async () => {
    const deep = `${"[".repeat(10_000)}${"]".repeat(10_000)}`;
    const text = JSON.stringify(sessionBody({ script: {} })).replace(`"script":{}`, `"script":{},"deep":${deep}`);
    const response = await postJson(runner.baseUrl, "/v1/sessions", text);
    expect(response.status).toBe(400);
    expect(((await response.json()) as { message: string }).message).toMatch(/nested more than 64 levels/);
  });

  it.each([
    [["a", "b"], "body/env must be object"],
    [{ "A=B": "x" }, "body/env/A=B must have property names"],
    [{ "": "x" }, "body/env/ must have property names"],
    [{ "A\u0000": "x" }, "must have property names"],
  ])("refuses env %j, which a real apiserver would", async (env, message) => {
    const response = await postJson(runner.baseUrl, "/v1/sessions", sessionBody({ script: {} }, { env }));
    expect(response.status).toBe(400);
    expect(((await response.json()) as { message: string }).message).toContain(message);
  });

  it("refuses NUL bytes and directory paths in a bundle with 400 at create", async () => {
    for (const relativePath of ["..\u0000", "telo.yaml\u0000.bak", "./"]) {
      const body = sessionBody({ script: {} }, { bundle: { entryRelativePath: "telo.yaml", files: [{ relativePath: "telo.yaml", contents: "" }, { relativePath, contents: "" }] } });
      const response = await postJson(runner.baseUrl, "/v1/sessions", body);
      expect(response.status).toBe(400);
      expect(((await response.json()) as { error: string }).error).toBe("invalid_bundle");
    }
  });

  it("sends vary: Origin once on the event stream", async () => {
    const { sessionId } = await runner.client.createSession(sessionBody());
    const abort = new AbortController();
    const response = await fetch(`${runner.baseUrl}/v1/sessions/${sessionId}/events`, { headers: { origin: "http://allowed.example" }, signal: abort.signal });
    expect(response.headers.get("vary")).toBe("Origin");
    abort.abort();
    await runner.client.deleteSession(sessionId);
  });

  it("refuses HTTP requests from an origin outside the allowlist with 403 origin_not_allowed", async () => {
    const refused = await fetch(`${runner.baseUrl}/v1/capabilities`, { headers: { origin: "http://evil.example" } });
    expect(refused.status).toBe(403);
    expect(await refused.json()).toEqual({ error: "origin_not_allowed", message: "this origin is not allowed to use the runner" });
    expect((await fetch(`${runner.baseUrl}/v1/capabilities`, { headers: { origin: "http://allowed.example" } })).status).toBe(200);
    expect((await fetch(`${runner.baseUrl}/v1/capabilities`)).status).toBe(200);
  });

  it("keeps a backend's own words out of a 500 stop_failed", async () => {
    const secret = "HTTP-Code: 500 Headers: {\"audit-id\":\"b7d1\"} Body: serviceaccount telo-k8s-runner";
    const { sessionId } = await runner.client.createSession(sessionBody({ script: { stopError: secret } }));
    await eventsUntil(runner.client, sessionId, isStatus("running"));
    const response = await fetch(`${runner.baseUrl}/v1/sessions/${sessionId}`, { method: "DELETE" });
    expect(response.status).toBe(500);
    const text = await response.text();
    expect(text).not.toContain("audit-id");
    expect(JSON.parse(text).error).toBe("stop_failed");
  });
});
