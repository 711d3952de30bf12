/**
 * Access control, off by default (docs/operating.md "Access knobs"): the bearer token (HTTP, SSE and WebSocket), the
 * bind address, and the per-client create limit, through the real processes.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { freePort } from "../support/ports.ts";
import { capturedStderr } from "../support/processes.ts";
import { eventsUntil, isStatus } from "../support/streams.ts";
import { type Processes, openSocket, postJson, startProcesses } from "./support.ts";
import { sessionBody } from "../support/session-body.ts";
import { SlidingWindowLimit } from "../../handlers/rate-limit.ts";
import { tokenMatches } from "../../src/observability/secret-compare.ts";
import { WebSocket } from "ws";

/** The HTTP answer to a WebSocket upgrade the runner refuses: status, headers and body as read off the socket. */
function refusedUpgrade(url: string, headers: Record<string, string>): Promise<{ status: number | undefined; headers: Record<string, string | string[] | undefined>; body: string }> {
  const socket = new WebSocket(url, { headers });
  return new Promise((resolve, reject) => {
    socket.once("open", () => reject(new Error("the upgrade was accepted")));
    socket.once("error", reject);
    socket.once("unexpected-response", (request, response) => {
      const chunks: Buffer[] = [];
      response.on("data", (chunk: Buffer) => chunks.push(chunk));
      response.on("end", () => {
        resolve({ status: response.statusCode, headers: response.headers, body: Buffer.concat(chunks).toString("utf8") });
        request.destroy();
      });
    });
  });
}

const TOKEN = "s3cret-token-of-the-operator-0123";

describe("RUNNER_API_TOKEN", () => {
  let runner: Processes;
  beforeAll(async () => {
    runner = await startProcesses({ RUNNER_API_TOKEN: TOKEN, LOG_LEVEL: "debug" });
  });
  afterAll(() => runner.close());

  it("refuses requests without the token (401) and never echoes what was offered", async () => {
    for (const authorization of [undefined, "Bearer wrong-token-wrong-token", `Basic ${TOKEN}`, `Bearer ${TOKEN}x`]) {
      const response = await fetch(`${runner.baseUrl}/v1/capabilities`, { headers: authorization ? { authorization } : {} });
      expect(response.status).toBe(401);
      expect(response.headers.get("www-authenticate")).toBe('Bearer realm="k8s-runner"');
      expect(await response.text()).not.toContain("token-");
    }
    const refused = await postJson(runner.baseUrl, "/v1/sessions", sessionBody());
    expect(refused.status).toBe(401);
  });

  it("answers a WebSocket without the token as any request: 401, JSON body and www-authenticate", async () => {
    const url = `ws://127.0.0.1:${runner.port}/v1/sessions/abcdefghijkl/io`;
    const attempts: Record<string, string>[] = [{}, { authorization: "Bearer wrong-token-wrong-token" }];
    for (const headers of attempts) {
      const refused = await refusedUpgrade(url, headers);
      expect(refused.status).toBe(401);
      expect(refused.headers["www-authenticate"]).toBe('Bearer realm="k8s-runner"');
      expect(refused.headers["content-type"]).toMatch(/^application\/json/);
      expect(JSON.parse(refused.body)).toEqual({ error: "unauthorized", message: "a valid bearer token is required" });
    }
  });

  it("leaves liveness and readiness open to probes", async () => {
    expect((await fetch(`${runner.baseUrl}/v1/health`)).status).toBe(200);
    expect((await fetch(`${runner.baseUrl}/v1/ready`)).status).toBe(200);
  });

  it("serves every route with the bearer token, streams also with ?access_token=", async () => {
    const { sessionId } = await runner.client.createSession(sessionBody());
    await eventsUntil(runner.client, sessionId, isStatus("running"));
    const events = await fetch(`${runner.baseUrl}/v1/sessions/${sessionId}/events?access_token=${TOKEN}`);
    expect(events.status).toBe(200);
    await events.body?.cancel();
    // ?access_token= is for what browsers cannot give headers to, not for JSON routes.
    expect((await fetch(`${runner.baseUrl}/v1/sessions/${sessionId}?access_token=${TOKEN}`)).status).toBe(401);

    const url = `ws://127.0.0.1:${runner.port}/v1/sessions/${sessionId}/io`;
    await expect(openSocket(url)).rejects.toThrow("HTTP 401");
    const withHeader = await openSocket(url, { authorization: `Bearer ${TOKEN}` });
    withHeader.socket.close(1000);
    const withQuery = await openSocket(`${url}?access_token=${TOKEN}`);
    withQuery.socket.close(1000);
    await runner.client.deleteSession(sessionId);
  });

  it("never writes the token or an env value to a log line", async () => {
    const { sessionId } = await runner.client.createSession(sessionBody({ script: {} }, { env: { API_KEY: "env-value-never-logged" } }));
    await eventsUntil(runner.client, sessionId, isStatus("running"));
    await runner.client.deleteSession(sessionId);
    const logs = capturedStderr(runner.api()) + capturedStderr(runner.supervisor());
    expect(logs).not.toContain(TOKEN);
    expect(logs).not.toContain("env-value-never-logged");
  });

  it("compares tokens by digest, so any length is compared without throwing", () => {
    expect(tokenMatches(TOKEN, TOKEN)).toBe(true);
    expect(tokenMatches("", TOKEN)).toBe(false);
    expect(tokenMatches("x".repeat(10_000), TOKEN)).toBe(false);
    expect(tokenMatches(undefined, TOKEN)).toBe(false);
  });
});

describe("RUNNER_CREATE_RATE_LIMIT", () => {
  let runner: Processes;
  beforeAll(async () => {
    runner = await startProcesses({ RUNNER_CREATE_RATE_LIMIT: "2" });
  });
  afterAll(() => runner.close());

  it("answers 429 with retry-after past the limit, and only on session creation", async () => {
    for (let i = 0; i < 2; i++) expect((await postJson(runner.baseUrl, "/v1/sessions", sessionBody())).status).toBe(201);
    const limited = await postJson(runner.baseUrl, "/v1/sessions", sessionBody());
    expect(limited.status).toBe(429);
    const retryAfter = Number(limited.headers.get("retry-after"));
    expect(retryAfter).toBeGreaterThanOrEqual(1);
    expect(retryAfter).toBeLessThanOrEqual(60);
    expect(((await limited.json()) as { error: string }).error).toBe("rate_limited");
    expect((await fetch(`${runner.baseUrl}/v1/capabilities`)).status).toBe(200);
  });

  it("is a sliding window per client, with the clock passed in", () => {
    const limit = new SlidingWindowLimit(2, 60_000);
    expect(limit.take("a", 0).allowed).toBe(true);
    expect(limit.take("a", 10_000).allowed).toBe(true);
    expect(limit.take("a", 20_000)).toEqual({ allowed: false, retryAfterSeconds: 40 });
    expect(limit.take("b", 20_000).allowed).toBe(true);
    expect(limit.take("a", 60_001).allowed).toBe(true);
  });
});

describe("RUNNER_BIND_ADDRESS", () => {
  it("listens on the given address only", async () => {
    const runner = await startProcesses({ RUNNER_BIND_ADDRESS: "127.0.0.1" });
    try {
      expect((await fetch(`http://127.0.0.1:${runner.port}/v1/health`)).status).toBe(200);
      // 127.0.0.2 is loopback too: a 0.0.0.0 listener would answer there.
      await expect(fetch(`http://127.0.0.2:${runner.port}/v1/health`)).rejects.toThrow();
    } finally {
      await runner.close();
    }
  });

  it("refuses an address that is not an IP with exit 2 and one line", async () => {
    const { spawnTs } = await import("../support/processes.ts");
    const child = spawnTs("src/api/main.ts", { RUNNER_BIND_ADDRESS: "localhost", PORT: String(await freePort()) });
    const code = await new Promise((resolve) => child.once("exit", resolve));
    expect(code).toBe(2);
    expect(capturedStderr(child).trim()).toBe("RUNNER_BIND_ADDRESS must be an IP address (e.g. 127.0.0.1, 0.0.0.0, ::).");
  });
});
