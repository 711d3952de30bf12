/**
 * Logs and metrics through both real processes: figures move when sessions start, stream and
 * stop (scraped from GET /metrics over HTTP); a request id reaches both processes' lines; no
 * token, env value or bundle content reaches any line.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import WebSocket from "ws";
import { type RunnerUnderTest, startRunner } from "../support/processes.ts";
import { sessionBody } from "../support/session-body.ts";
import { waitFor } from "../support/wait.ts";
import { type Sample, scrape, valueOf } from "../support/metrics.ts";
import { eventsUntil, framesUntilText, isStatus } from "../support/streams.ts";

const TOKEN = "tok-9f1c2e7d-never-logged";
const ENV_SECRET = "env-5b8a-never-logged";
const BUNDLE_SECRET = "bundle-77d0-never-logged";
const REQUEST_ID = "req-observe-0001";

type LogLine = Record<string, unknown> & { message: string; level: string; component: string };
const lines = (text: string): LogLine[] => text.split("\n").filter((line) => line !== "").map((line) => JSON.parse(line) as LogLine);

describe("logs and metrics", () => {
  let runner: RunnerUnderTest;
  let sessionId: string;
  let before: Sample[];
  beforeAll(async () => {
    runner = await startRunner({
      env: { LOG_LEVEL: "debug", RUNNER_MAX_SESSIONS: "2" },
      clientOptions: { headers: { authorization: `Bearer ${TOKEN}` } },
    });
    before = await scrape(runner.baseUrl);
  });
  afterAll(() => runner.close());

  const supervisor = { process: "supervisor" };
  const moved = (after: Sample[], name: string, labels: Record<string, string>) =>
    valueOf(after, name, { ...supervisor, ...labels }) - valueOf(before, name, { ...supervisor, ...labels });

  it("starts a session carrying secrets and a request id; the id is echoed", async () => {
    const body = sessionBody(
      { script: { progress: [{ phase: "provision", message: "placing the pod" }] } },
      {
        env: { API_KEY: ENV_SECRET },
        bundle: { entryRelativePath: "telo.yaml", files: [{ relativePath: "telo.yaml", contents: `kind: Telo.Application\n# ${BUNDLE_SECRET}\n` }] },
      },
    );
    const response = await fetch(`${runner.baseUrl}/v1/sessions`, {
      method: "POST",
      headers: { "content-type": "application/json", authorization: `Bearer ${TOKEN}`, "x-request-id": REQUEST_ID },
      body: JSON.stringify(body),
    });
    expect(response.status).toBe(201);
    expect(response.headers.get("x-request-id")).toBe(REQUEST_ID);
    sessionId = ((await response.json()) as { sessionId: string }).sessionId;
    await eventsUntil(runner.client, sessionId, isStatus("running"));
  });

  it("counts the session, its start and its start latency by stage", async () => {
    const after = await scrape(runner.baseUrl);
    expect(valueOf(after, "runner_sessions", { ...supervisor, mode: "run", state: "running" })).toBe(1);
    expect(moved(after, "runner_session_starts_total", { mode: "run", outcome: "running" })).toBe(1);
    expect(moved(after, "runner_session_start_seconds_count", { mode: "run", stage: "provision" })).toBe(1);
    expect(moved(after, "runner_session_start_seconds_count", { mode: "run", stage: "running" })).toBe(1);
    expect(valueOf(after, "runner_supervisor_up", { process: "api" })).toBe(1);
    // Process memory, once per process.
    expect(valueOf(after, "process_resident_memory_bytes", { process: "api" })).toBeGreaterThan(0);
    expect(valueOf(after, "process_resident_memory_bytes", supervisor)).toBeGreaterThan(0);
  });

  it("counts SSE subscribers while a stream is open and terminal bytes both ways", async () => {
    const abort = new AbortController();
    const follow = (async () => {
      for await (const _item of runner.client.events(sessionId, { signal: abort.signal })) {
        // held open until aborted
      }
    })().catch(() => undefined);
    await waitFor("an SSE subscriber", async () => valueOf(await scrape(runner.baseUrl), "runner_sse_subscribers", supervisor) >= 1 || undefined);
    abort.abort();
    await follow;
    await waitFor("no SSE subscriber", async () => valueOf(await scrape(runner.baseUrl), "runner_sse_subscribers", supervisor) === 0 || undefined);

    const terminal = runner.client.terminal(sessionId);
    await terminal.send("metered\r");
    await framesUntilText(terminal, "metered");
    terminal.close();
    const after = await scrape(runner.baseUrl);
    expect(moved(after, "runner_terminal_bytes_total", { direction: "in" })).toBeGreaterThanOrEqual("metered\r".length);
    expect(moved(after, "runner_terminal_bytes_total", { direction: "out" })).toBeGreaterThanOrEqual("metered".length);
  });

  it("carries a terminal connection's request id to the supervisor", async () => {
    const socket = new WebSocket(`${runner.baseUrl.replace(/^http/, "ws")}/v1/sessions/${sessionId}/io`, { headers: { "x-request-id": "req-terminal-1" } });
    await new Promise((resolve, reject) => socket.once("message", resolve).once("error", reject));
    socket.close();
    await waitFor(
      "the supervisor's line for the terminal upgrade",
      () => lines(runner.stderr().supervisor).some((line) => line.requestId === "req-terminal-1" && line.path === `/internal/sessions/${sessionId}/io`) || undefined,
    );
  });

  it("moves the session to stopped, and counts an eviction for capacity", async () => {
    await runner.client.deleteSession(sessionId);
    await eventsUntil(runner.client, sessionId, isStatus("stopped"));
    let after = await scrape(runner.baseUrl);
    expect(valueOf(after, "runner_sessions", { ...supervisor, state: "running" })).toBe(0);
    expect(valueOf(after, "runner_sessions", { ...supervisor, mode: "run", state: "stopped" })).toBe(1);
    // Capacity is 2: the second new session takes the stopped one's place.
    for (let i = 0; i < 2; i += 1) await runner.client.createSession(sessionBody());
    after = await scrape(runner.baseUrl);
    expect(moved(after, "runner_session_evictions_total", { reason: "capacity" })).toBe(1);
    expect(valueOf(after, "runner_sessions", { ...supervisor, state: "stopped" })).toBe(0);
  });

  it("carries the request id into both processes' lines, and the session id on session lines", async () => {
    const api = lines(runner.stderr().api);
    const supervisorLines = await waitFor("the supervisor's stopped line", () => {
      const parsed = lines(runner.stderr().supervisor);
      return parsed.some((line) => line.message === "session status" && line.sessionId === sessionId && line.status === "stopped") ? parsed : undefined;
    });
    expect(api).toContainEqual(
      expect.objectContaining({ component: "api", message: "request", method: "POST", path: "/v1/sessions", status: 201, requestId: REQUEST_ID }),
    );
    expect(supervisorLines).toContainEqual(expect.objectContaining({ component: "supervisor", message: "session admitted", requestId: REQUEST_ID, sessionId }));
    expect(supervisorLines).toContainEqual(expect.objectContaining({ message: "internal request", path: "/internal/sessions", requestId: REQUEST_ID }));
    for (const line of supervisorLines.filter((entry) => entry.message.startsWith("session "))) expect(line.sessionId).toEqual(expect.any(String));
  });

  it("writes no token, env value or bundle content to any line", () => {
    const { api, supervisor: supervisorText } = runner.stderr();
    for (const text of [api, supervisorText]) {
      expect(text).not.toContain(TOKEN);
      expect(text).not.toContain(ENV_SECRET);
      expect(text).not.toContain(BUNDLE_SECRET);
    }
  });

  it("still answers a scrape while the supervisor is away, saying so", async () => {
    await runner.stopSupervisor();
    const samples = await scrape(runner.baseUrl);
    expect(valueOf(samples, "runner_supervisor_up", { process: "api" })).toBe(0);
    expect(samples.some((sample) => sample.labels.process === "supervisor")).toBe(false);
    await runner.startSupervisor();
    expect(valueOf(await scrape(runner.baseUrl), "runner_supervisor_up", { process: "api" })).toBe(1);
  });
});
