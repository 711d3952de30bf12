/**
 * Graceful shutdown (docs/operating.md "Readiness and shutdown") and readiness, through the real processes: a
 * supervisor with a terminal open still exits on SIGTERM, the api closes terminals with 1012
 * and ends event streams, and /v1/ready follows the supervisor while /v1/health does not.
 */
import { connect } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import { eventsUntil, isStatus } from "../support/streams.ts";
import { capturedStderr, spawnTs } from "../support/processes.ts";
import { waitFor } from "../support/wait.ts";
import { type Processes, exitOf, openSocket, startProcesses } from "./support.ts";
import { sessionBody } from "../support/session-body.ts";

let runner: Processes | undefined;
afterEach(async () => {
  await runner?.close();
  runner = undefined;
});

describe("shutdown", () => {
  it("a supervisor with an open terminal to a failed session still exits on SIGTERM", async () => {
    runner = await startProcesses();
    const { sessionId } = await runner.client.createSession(sessionBody({ script: { startDelayMs: 200, startError: { stage: "start", message: "pod never started" } } }));
    const { closed } = await openSocket(`ws://127.0.0.1:${runner.port}/v1/sessions/${sessionId}/io`);
    await eventsUntil(runner.client, sessionId, isStatus("failed"));
    const running = await runner.client.createSession(sessionBody());
    await eventsUntil(runner.client, running.sessionId, isStatus("running"));
    const open = await openSocket(`ws://127.0.0.1:${runner.port}/v1/sessions/${running.sessionId}/io`);
    const supervisor = runner.supervisor();
    supervisor.kill("SIGTERM");
    expect(await exitOf(supervisor)).toBe(0);
    // The api stays up and tells the terminal's client to come back (1011, retryable).
    expect((await open.closed).code).toBe(1011);
    await closed;
    expect((await fetch(`${runner.baseUrl}/v1/health`)).status).toBe(200);
  });

  it("a supervisor killed under an open event stream ends the stream, and the api logs it as one JSON line", async () => {
    runner = await startProcesses();
    const { sessionId } = await runner.client.createSession(sessionBody());
    await eventsUntil(runner.client, sessionId, isStatus("running"));
    const stream = await fetch(`${runner.baseUrl}/v1/sessions/${sessionId}/events`);
    const reader = stream.body!.getReader();
    let text = new TextDecoder().decode((await reader.read()).value);
    const supervisor = runner.supervisor();
    supervisor.kill("SIGKILL");
    await exitOf(supervisor);
    // The stream ends, or is cut (sse-relay.ts cuts a stream whose supervisor reset it, so the
    // client knows to come back); either way it does not hang or break off mid-frame.
    for (;;) {
      const chunk = await reader.read().catch(() => ({ done: true as const, value: undefined }));
      if (chunk.done) break;
      text += new TextDecoder().decode(chunk.value);
    }
    expect(text.endsWith("\n\n")).toBe(true);
    await waitFor("the api's line about it", () => capturedStderr(runner!.api()).includes("event stream from the supervisor broke off") || undefined);
    const lines = capturedStderr(runner.api()).split("\n").filter((line) => line !== "");
    for (const line of lines) expect(() => JSON.parse(line), line).not.toThrow();
    const broke = lines.map((line) => JSON.parse(line) as { message: string; error?: { name: string; message: string } }).find((line) => line.message.includes("broke off"));
    // Named (undici reports the broken body as an abort), never dumped with a stack and the socket.
    expect(broke?.error).toEqual({ name: expect.any(String), message: expect.any(String) });
  });

  it("the api closes terminals with 1012, ends event streams and exits 0 on SIGTERM", async () => {
    runner = await startProcesses();
    const { sessionId } = await runner.client.createSession(sessionBody());
    await eventsUntil(runner.client, sessionId, isStatus("running"));
    const terminal = await openSocket(`ws://127.0.0.1:${runner.port}/v1/sessions/${sessionId}/io`);
    const events = await fetch(`${runner.baseUrl}/v1/sessions/${sessionId}/events`);
    const reader = events.body!.getReader();
    await reader.read();
    const api = runner.api();
    api.kill("SIGTERM");
    expect(await exitOf(api)).toBe(0);
    expect((await terminal.closed).code).toBe(1012);
    // The stream ends (cleanly or cut); it does not hang.
    for (;;) {
      const chunk = await reader.read().catch(() => ({ done: true }));
      if (chunk.done) break;
    }
  });

  // An attacker holding a request open (its body half sent) cannot delay the api's shutdown.
  it("the api exits 0 on SIGTERM while a client holds a request half sent", async () => {
    runner = await startProcesses();
    const held = connect(runner.port, "127.0.0.1");
    await new Promise<void>((resolve) => held.once("connect", () => resolve()));
    held.on("error", () => undefined);
    held.write("POST /v1/sessions HTTP/1.1\r\nhost: 127.0.0.1\r\ncontent-type: application/json\r\ncontent-length: 1000\r\n\r\n{\"apps\":");
    const api = runner.api();
    api.kill("SIGTERM");
    expect(await exitOf(api)).toBe(0);
    held.destroy();
  });

  it("the api exits 0 when the process that started it with a channel is gone (its channel closes)", async () => {
    runner = await startProcesses({ LOG_LEVEL: "info" });
    const api = runner.api();
    // What the api sees of a parent that died however it died: its end of the channel closes.
    api.disconnect();
    expect(await exitOf(api)).toBe(0);
    expect(capturedStderr(api)).toContain("parent process gone");
  });

  // The bound itself: whatever a shutdown step waits on, the process goes, saying why.
  it("a process whose shutdown hangs exits 1 at its bound, with a log line", async () => {
    const hung = spawnTs("test/hardening/fixtures/hung-shutdown.ts", { BOUND_MS: "300" });
    let logged = "";
    hung.stdout?.on("data", (chunk: Buffer) => (logged += chunk.toString()));
    expect(await exitOf(hung)).toBe(1);
    expect(logged).toContain("armed");
    expect(JSON.parse(logged.split("\n").find((line) => line.includes("shutdown did not finish"))!)).toMatchObject({ boundMs: 300 });
  });
});

describe("readiness", () => {
  it("/v1/ready is false while the supervisor is unreachable; /v1/health stays true", async () => {
    runner = await startProcesses();
    expect(await (await fetch(`${runner.baseUrl}/v1/ready`)).json()).toEqual({ ready: true });
    const supervisor = runner.supervisor();
    supervisor.kill("SIGKILL");
    await exitOf(supervisor);
    const notReady = await fetch(`${runner.baseUrl}/v1/ready`);
    expect(notReady.status).toBe(503);
    expect(await notReady.json()).toEqual({ ready: false, error: "supervisor_unavailable", message: "the runner's supervisor process is not reachable" });
    expect((await fetch(`${runner.baseUrl}/v1/health`)).status).toBe(200);
    await runner.startSupervisor();
    expect((await fetch(`${runner.baseUrl}/v1/ready`)).status).toBe(200);
  });
});
