/**
 * The link between an api process and a supervisor (docs/relay.md), through real processes: a
 * terminal whose client does not read holds back only itself, and neither process's memory grows
 * with what it is not sent; the peer listener refuses a caller without the shared credential,
 * on HTTP/2 and on a terminal's upgrade alike; and an api process whose supervisor is a peer over
 * TCP serves an event stream and a terminal end to end.
 */
import { connect } from "node:net";
import type { Socket } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { WebSocket } from "ws";
import { RunnerClient } from "../../src/client/index.ts";
import { routes } from "../../src/contract/routes.ts";
import { decodeByteFrame } from "../../src/contract/streams.ts";
import { SupervisorClient, SupervisorUnavailableError } from "../../src/internal/client.ts";
import { INTERNAL_PROTOCOL_VERSION, PEER_CREDENTIAL_HEADER, PROTOCOL_HEADER } from "../../src/internal/protocol.ts";
import { InternalH2 } from "../support/internal-h2.ts";
import { scrape, valueOf } from "../support/metrics.ts";
import { freePort } from "../support/ports.ts";
import { type RunnerUnderTest, spawnTs, startRunner } from "../support/processes.ts";
import { sessionBody } from "../support/session-body.ts";
import { eventsUntil, framesUntilText, isStatus, textOf } from "../support/streams.ts";
import { waitFor } from "../support/wait.ts";

const SECRET = "a-shared-peer-credential-of-40-characters";
const MiB = 1024 * 1024;

/** A raw WebSocket to the api's terminal, and the output text it has read. */
async function rawTerminal(baseUrl: string, sessionId: string): Promise<{ ws: WebSocket; socket: Socket; text(): string; bytes(): number }> {
  const ws = new WebSocket(`${baseUrl.replace(/^http/, "ws")}/v1/sessions/${sessionId}/io`);
  let text = "";
  let bytes = 0;
  ws.on("message", (data: Buffer, binary: boolean) => {
    if (!binary) return;
    const decoded = decodeByteFrame(data);
    if (!decoded) return;
    bytes += decoded.payload.byteLength;
    if (text.length < 4096) text += Buffer.from(decoded.payload).toString("latin1");
  });
  await new Promise((resolve, reject) => {
    ws.once("open", resolve);
    ws.once("error", reject);
  });
  return { ws, socket: (ws as unknown as { _socket: Socket })._socket, text: () => text, bytes: () => bytes };
}

/** Resident memory of the api and the supervisor, from the runner's metrics. */
async function residentMiB(baseUrl: string): Promise<{ api: number; supervisor: number }> {
  const samples = await scrape(baseUrl);
  const of = (process: string) => valueOf(samples, "process_resident_memory_bytes", { process }) / MiB;
  return { api: of("api"), supervisor: of("supervisor") };
}

/** A raw HTTP/1.1 upgrade to `port`; resolves with the answer's status line and whether the connection was then closed. */
function rawUpgrade(port: number, headers: Record<string, string>): Promise<{ statusLine: string; closed: boolean }> {
  return new Promise((resolve, reject) => {
    const socket = connect({ host: "127.0.0.1", port });
    const lines = ["GET /internal/sessions/abcdefghijkl/io HTTP/1.1", "host: supervisor", "connection: Upgrade", "upgrade: websocket", "sec-websocket-version: 13", "sec-websocket-key: dGhlIHNhbXBsZSBub25jZQ=="];
    for (const [name, value] of Object.entries(headers)) lines.push(`${name}: ${value}`);
    socket.write(`${lines.join("\r\n")}\r\n\r\n`);
    let received = "";
    let statusLine = "";
    socket.on("data", (chunk: Buffer) => {
      received += chunk.toString("latin1");
      statusLine ||= received.includes("\r\n") ? received.slice(0, received.indexOf("\r\n")) : "";
      // An upgraded connection stays open: the status line says enough.
      if (statusLine.includes(" 101 ")) {
        socket.destroy();
        resolve({ statusLine, closed: false });
      }
    });
    socket.on("close", () => resolve({ statusLine, closed: true }));
    socket.on("error", reject);
  });
}

describe("the multiplexed link", () => {
  let runner: RunnerUnderTest;
  let peerPort: number;
  beforeAll(async () => {
    peerPort = await freePort();
    runner = await startRunner({ env: { RUNNER_PEER_LISTEN: `127.0.0.1:${peerPort}`, RUNNER_PEER_SECRET: SECRET } });
  });
  afterAll(async () => {
    await runner.close();
  });

  it("a terminal whose client does not read delays no other terminal or call, and grows neither process's memory", async () => {
    const stalled = (await runner.client.createSession(sessionBody())).sessionId;
    const other = (await runner.client.createSession(sessionBody())).sessionId;
    await eventsUntil(runner.client, stalled, isStatus("running"));
    await eventsUntil(runner.client, other, isStatus("running"));
    const before = await residentMiB(runner.baseUrl);
    const blocked = await rawTerminal(runner.baseUrl, stalled);
    try {
      // Never read: the kernel's buffers fill, the api stops reading the supervisor, and the
      // supervisor's follower stops at its 1 MiB ceiling.
      blocked.socket.pause();
      // `!output <n>`: the scripted workload writes n bytes to its terminal: 48 MiB, then 96 more.
      blocked.ws.send(Buffer.from("!output 65536\n".repeat(768)));
      await new Promise((resolve) => setTimeout(resolve, 3_000));
      const first = await residentMiB(runner.baseUrl);
      blocked.ws.send(Buffer.from("!output 65536\n".repeat(1536)));
      await new Promise((resolve) => setTimeout(resolve, 4_000));

      // Another session's terminal and a JSON call go on at once.
      const live = runner.client.terminal(other);
      const began = performance.now();
      await live.send("past the stall\n");
      expect(textOf(await framesUntilText(live, "past the stall"))).toContain("past the stall");
      expect(performance.now() - began).toBeLessThan(5_000);
      expect((await runner.client.getSession(other)).sessionId).toBe(other);
      live.close();

      // 144 MiB made and not read: neither process holds it. The api holds at most a socket's
      // chunk; the supervisor its replay buffer (5 MB) and 1 MiB ceiling, reached in the first
      // 48 MiB, and the 96 MiB after them add no more than their garbage not yet collected.
      const stalledAt = await residentMiB(runner.baseUrl);
      expect(stalledAt.api - before.api).toBeLessThan(24);
      expect(stalledAt.supervisor - first.supervisor).toBeLessThan(48);

      // The stalled terminal was held, not lost: read, what the replay buffer kept arrives.
      blocked.socket.resume();
      await waitFor("the stalled terminal to flow once read", async () => (blocked.bytes() >= 4 * MiB ? true : undefined));
    } finally {
      blocked.ws.terminate();
      await runner.client.deleteSession(stalled);
      await runner.client.deleteSession(other);
    }
  });

  it("refuses a peer without the shared credential", async () => {
    const target = { host: "127.0.0.1", port: peerPort };
    for (const headers of [{}, { "x-k8s-runner-peer-credential": "not-the-secret" }] as Record<string, string>[]) {
      const raw = new InternalH2(target);
      const answer = await raw.request("GET", "/internal/capabilities", { [PROTOCOL_HEADER]: INTERNAL_PROTOCOL_VERSION, ...headers });
      expect(answer.status).toBe(401);
      expect(JSON.parse(answer.text)).toMatchObject({ error: "unauthorized" });
      // The connection is ended, not kept for another try.
      await new Promise<void>((resolve) => (raw.session.closed ? resolve() : raw.session.once("close", () => resolve())));
    }
    const wrong = new SupervisorClient({ ...target, credential: "another-credential-also-long-enough!!" });
    await expect(wrong.call(routes.capabilities)).rejects.toThrow(SupervisorUnavailableError);
    await wrong.close();
    const right = new SupervisorClient({ ...target, credential: SECRET });
    expect(await right.call(routes.capabilities)).toBeTruthy();
    await right.close();

    // A terminal's upgrade on the same port: refused without the credential, its connection closed.
    const versioned = { [PROTOCOL_HEADER]: INTERNAL_PROTOCOL_VERSION };
    for (const offered of [{}, { [PEER_CREDENTIAL_HEADER]: "not-the-secret" }] as Record<string, string>[]) {
      const answer = await rawUpgrade(peerPort, { ...versioned, ...offered });
      expect(answer.statusLine).toMatch(/^HTTP\/1\.1 401 /);
      expect(answer.closed).toBe(true);
    }
    // With it, the upgrade is taken (the session is unknown: a 4404 close follows, after the 101).
    expect((await rawUpgrade(peerPort, { ...versioned, [PEER_CREDENTIAL_HEADER]: SECRET })).statusLine).toMatch(/^HTTP\/1\.1 101 /);
  });

  it("carries an event stream and a terminal end to end to an api whose supervisor is a peer", async () => {
    const port = await freePort();
    const api = spawnTs("src/api/main.ts", {
      PORT: String(port),
      RUNNER_INTERNAL_SOCKET: runner.socketPath,
      RUNNER_PEER_SUPERVISOR: `127.0.0.1:${peerPort}`,
      RUNNER_PEER_SECRET: SECRET,
    });
    try {
      const client = new RunnerClient(`http://127.0.0.1:${port}`);
      await waitFor("the peer api to be ready", async () => ((await fetch(`http://127.0.0.1:${port}/v1/ready`).catch(() => undefined))?.ok ? true : undefined));
      const { sessionId } = await client.createSession(sessionBody());
      await eventsUntil(client, sessionId, isStatus("running"));
      const terminal = client.terminal(sessionId);
      await terminal.send("over the peer link\n");
      expect(textOf(await framesUntilText(terminal, "over the peer link"))).toContain("over the peer link");
      terminal.close();
      // The session is the peer's: its own api sees it.
      expect((await runner.client.getSession(sessionId)).sessionId).toBe(sessionId);
      await client.deleteSession(sessionId);
      const events = [];
      for await (const item of client.events(sessionId)) events.push(item);
      expect(events.at(-1)).toMatchObject({ event: { type: "status", status: { kind: "stopped" } } });
    } finally {
      api.kill("SIGKILL");
    }
  });
});
