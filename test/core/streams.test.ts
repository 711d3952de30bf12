/**
 * The SSE stream and the terminal WebSocket (docs/api.md) through both processes.
 */
import { describe, expect, it } from "vitest";
import { WebSocket } from "undici";
import { runnerForSuite } from "../support/suite-runner.ts";
import { sessionBody } from "../support/session-body.ts";
import { waitFor } from "../support/wait.ts";
import { eventsOf, eventsUntil, framesToClose, framesUntilText, textOf } from "../support/streams.ts";

describe("SSE and WebSocket", () => {
  const runner = runnerForSuite({ env: { RUNNER_REPLAY_BUFFER_BYTES: "200000", TEST_HEARTBEAT_MS: "200" } });

  it("streams events with ids, names and the whole event as data, then ends after the terminal status", async () => {
    const { sessionId } = await runner.client.createSession(
      sessionBody({ script: { progress: [{ phase: "provision", message: "Scheduling" }], exitAfterMs: 100, exitCode: 0 } }),
    );
    const response = await fetch(`${runner.baseUrl}/v1/sessions/${sessionId}/events`, { headers: { origin: "https://editor.example" } });
    expect(response.status).toBe(200);
    expect(response.headers.get("content-type")).toBe("text/event-stream");
    expect(response.headers.get("cache-control")).toBe("no-cache, no-transform");
    expect(response.headers.get("x-accel-buffering")).toBe("no");
    expect(response.headers.get("access-control-allow-origin")).toBe("*");
    const text = await response.text();
    expect(text).toContain('id: 1\nevent: progress\ndata: {"type":"progress","phase":"provision","message":"Scheduling"}\n\n');
    expect(text).toMatch(/id: 2\nevent: status\ndata: \{"type":"status","status":\{"kind":"running","endpoints":\[\]\}\}\n\n/);
    expect(text.trimEnd().endsWith('data: {"type":"status","status":{"kind":"exited","code":0}}')).toBe(true);
  });

  it("resumes after Last-Event-ID (which wins over ?lastEventId) and replays to a late reader", async () => {
    const { sessionId } = await runner.client.createSession(sessionBody({ script: { exitAfterMs: 50 } }));
    const all = eventsOf(await eventsUntil(runner.client, sessionId));
    expect(all.map((event) => event.type)).toEqual(["status", "status"]);
    const fromHeader = await fetch(`${runner.baseUrl}/v1/sessions/${sessionId}/events?lastEventId=0`, { headers: { "last-event-id": "1" } });
    expect(await fromHeader.text()).not.toContain("id: 1\n");
    const fromQuery = await (await fetch(`${runner.baseUrl}/v1/sessions/${sessionId}/events?lastEventId=1`)).text();
    expect(fromQuery.startsWith("id: 2\n")).toBe(true);
    const invalid = await (await fetch(`${runner.baseUrl}/v1/sessions/${sessionId}/events?lastEventId=-4`)).text();
    expect(invalid.startsWith("id: 1\n")).toBe(true);
    // After the terminal status a reconnect gets the (empty) tail and an immediate end.
    const tail = await (await fetch(`${runner.baseUrl}/v1/sessions/${sessionId}/events`, { headers: { "last-event-id": "2" } })).text();
    expect(tail).toBe("");
  });

  it("answers an unknown session's stream with a 404 JSON body", async () => {
    const response = await fetch(`${runner.baseUrl}/v1/sessions/unknown/events`);
    expect(response.status).toBe(404);
    expect(await response.json()).toEqual({ error: "not_found", message: "session 'unknown' not in registry" });
  });

  it("sends heartbeats while a live session is quiet", async () => {
    const { sessionId } = await runner.client.createSession(sessionBody());
    const response = await fetch(`${runner.baseUrl}/v1/sessions/${sessionId}/events`);
    const reader = response.body!.getReader();
    const decoder = new TextDecoder();
    let text = "";
    // Read until a heartbeat arrives or the stream ends; an ended stream fails the test at once.
    for (let chunk = await reader.read(); !chunk.done; chunk = await reader.read()) {
      text += decoder.decode(chunk.value, { stream: true });
      if (text.includes(": heartbeat\n\n")) break;
    }
    await reader.cancel();
    await runner.client.deleteSession(sessionId);
    expect(text).toContain(": heartbeat\n\n");
  });

  it("echoes stdin, replays with seqs and honours ?lastSeq", async () => {
    const { sessionId } = await runner.client.createSession(sessionBody({ script: { output: "ready\r\n" } }));
    const first = runner.client.terminal(sessionId);
    await first.send("one\ntwo\n");
    const frames = await framesUntilText(first, "two");
    expect(frames[0]).toEqual({ kind: "control", message: { type: "seq", seq: 0, app: "app", io: "tty" } });
    const bytes = frames.filter((frame) => frame.kind === "bytes");
    expect(bytes.map((frame) => frame.seq)).toEqual(bytes.map((_, index) => index + 1));
    expect(bytes.every((frame) => frame.tag === "tty")).toBe(true);
    first.close();

    const second = runner.client.terminal(sessionId, { lastSeq: 2 });
    await second.send("three\n");
    const replay = await framesUntilText(second, "three");
    expect(replay[0]).toEqual({ kind: "control", message: { type: "seq", seq: 2, app: "app", io: "tty" } });
    expect(replay.find((frame) => frame.kind === "bytes")).toMatchObject({ seq: 3 });
    second.close();
    await runner.client.deleteSession(sessionId);
  });

  it("delivers binary stdin verbatim", async () => {
    const { sessionId } = await runner.client.createSession(sessionBody());
    const terminal = runner.client.terminal(sessionId);
    await terminal.send(new Uint8Array([0xe2, 0x82, 0xac, 0x0a]));
    expect(textOf(await framesUntilText(terminal, "€"))).toContain("€\r\n");
    terminal.close();
    await runner.client.deleteSession(sessionId);
  });

  it("coalesces resizes to the last one and ignores invalid sizes, clamping huge ones", async () => {
    const { sessionId } = await runner.client.createSession(sessionBody());
    const terminal = runner.client.terminal(sessionId);
    await terminal.resize(80, 24);
    await terminal.resize(100, 30);
    await terminal.resize(120, 40);
    const resized = textOf(await framesUntilText(terminal, "[resize"));
    expect(resized).toContain("[resize 120x40]");
    expect(resized).not.toContain("80x24");
    terminal.socket.send(JSON.stringify({ type: "resize", cols: "abc", rows: 10 }));
    terminal.socket.send("not json");
    terminal.socket.send(JSON.stringify({ type: "resize", cols: 99999.7, rows: 12.9 }));
    expect(textOf(await framesUntilText(terminal, "x12]"))).toContain("[resize 10000x12]");
    terminal.close();
    await runner.client.deleteSession(sessionId);
  });

  it("closes with 1000 after the last bytes when the session ends", async () => {
    const { sessionId } = await runner.client.createSession(sessionBody());
    const terminal = runner.client.terminal(sessionId);
    await terminal.send("last words\n!exit 0\n");
    const frames = await framesToClose(terminal);
    expect(textOf(frames)).toContain("last words");
    expect(await terminal.closed).toEqual({ code: 1000, reason: "session terminal" });

    // Already terminal with buffered bytes: replay, then 1000.
    const late = runner.client.terminal(sessionId);
    expect(textOf(await framesToClose(late))).toContain("last words");
    expect(await late.closed).toEqual({ code: 1000, reason: "session terminal" });
    // Nothing left to replay: 4410.
    const drained = runner.client.terminal(sessionId, { lastSeq: 1000 });
    expect(await drained.closed).toEqual({ code: 4410, reason: "session terminal, nothing to replay" });
  });

  it("closes with 4404 for unknown sessions and apps", async () => {
    expect(await runner.client.terminal("nope").closed).toEqual({ code: 4404, reason: "session not found" });
    const { sessionId } = await runner.client.createSession(sessionBody());
    expect(await runner.client.terminal(sessionId, { app: "other" }).closed).toEqual({
      code: 4404,
      reason: "session runs no app named 'other'",
    });
    await runner.client.deleteSession(sessionId);
  });

  it("shows a gap instead of buffering without bound for a reader that fell behind", async () => {
    const { sessionId } = await runner.client.createSession(sessionBody());
    const writer = runner.client.terminal(sessionId);
    // 10 × 60 kB through a 200 kB replay buffer: the start is evicted before anyone reads it.
    await writer.send("!output 60000\n".repeat(10) + "done\n");
    await framesUntilText(writer, "done");
    writer.close();
    const reader = runner.client.terminal(sessionId, { lastSeq: 0 });
    const frames = await framesUntilText(reader, "done");
    expect(frames[1]).toEqual({ kind: "control", message: { type: "gap", reason: "buffer_evicted" } });
    reader.close();
    await runner.client.deleteSession(sessionId);
  });

  it("releases a subscriber whose client disconnected mid-stream, and survives bad frames", async () => {
    const { sessionId } = await runner.client.createSession(sessionBody());
    const socket = new WebSocket(`${runner.baseUrl.replace("http", "ws")}/v1/sessions/${sessionId}/io`);
    await new Promise((resolve) => socket.addEventListener("open", resolve));
    socket.send(new Uint8Array(0));
    socket.send(JSON.stringify({ type: "resize" }));
    socket.send(JSON.stringify({ nothing: true }));
    socket.close(4000);
    const controller = new AbortController();
    const response = await fetch(`${runner.baseUrl}/v1/sessions/${sessionId}/events`, { signal: controller.signal });
    await response.body!.getReader().read();
    controller.abort();
    // The runner is still healthy and the session still answers.
    await waitFor("session", async () => (await runner.client.getSession(sessionId)).status.kind === "running" || undefined);
    await runner.client.deleteSession(sessionId);
    expect(eventsOf(await eventsUntil(runner.client, sessionId)).at(-1)).toEqual({ type: "status", status: { kind: "stopped" } });
  });
});

describe("origin allowlist", () => {
  const runner = runnerForSuite({ env: { RUNNER_CORS_ORIGINS: "https://editor.example, https://other.example" } });

  it("accepts listed origins and closes others with 4403", async () => {
    const { sessionId } = await runner.client.createSession(sessionBody());
    expect(await runner.client.terminal(sessionId).closed).toEqual({ code: 4403, reason: "forbidden_origin" });
    expect(await runner.client.terminal(sessionId, { origin: "https://evil.example" }).closed).toMatchObject({ code: 4403 });
    const allowed = runner.client.terminal(sessionId, { origin: "https://editor.example" });
    await allowed.send("hello\n");
    expect(textOf(await framesUntilText(allowed, "hello"))).toContain("hello");
    allowed.close();
  });

  it("echoes a listed origin in CORS headers, and none for others", async () => {
    const listed = await fetch(`${runner.baseUrl}/v1/health`, { headers: { origin: "https://other.example" } });
    expect(listed.headers.get("access-control-allow-origin")).toBe("https://other.example");
    expect(listed.headers.get("vary")).toContain("Origin");
    const unlisted = await fetch(`${runner.baseUrl}/v1/health`, { headers: { origin: "https://evil.example" } });
    expect(unlisted.headers.get("access-control-allow-origin")).toBeNull();
    const preflight = await fetch(`${runner.baseUrl}/v1/sessions`, {
      method: "OPTIONS",
      headers: {
        origin: "https://editor.example",
        "access-control-request-method": "POST",
        "access-control-request-headers": "content-type, x-telo-accepted-terms",
      },
    });
    expect(preflight.status).toBe(204);
    expect(preflight.headers.get("access-control-allow-methods")).toBe("GET,POST,PUT,DELETE,OPTIONS");
    expect(preflight.headers.get("access-control-allow-headers")).toContain("x-telo-accepted-terms");
  });
});
