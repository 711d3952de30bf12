/**
 * The api's splice of a terminal (src/internal/terminal-splice.ts, terminal-upgrade.ts) between a
 * real ws client and a supervisor end written byte by byte here, so a frame can be cut off
 * exactly where a test wants it: a supervisor that breaks, or an api that shuts down, while a
 * large frame is under way leaves the client with whole frames and a close code, never a part
 * of a frame or a bare reset; refusals of the upgrade become the contract's close codes.
 */
import { mkdtemp, rm } from "node:fs/promises";
import { type Server, createServer as createHttpServer } from "node:http";
import { type Server as NetServer, type Socket, createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import * as ws from "ws";
import { WebSocket } from "ws";
import type { Keepalive } from "../../src/internal/keepalive.ts";
import { Splices } from "../../src/internal/terminal-splice.ts";
import { openTerminalUpgrade } from "../../src/internal/terminal-upgrade.ts";
import { acceptKey } from "../../src/internal/ws-wire.ts";
import { waitFor } from "../support/wait.ts";

/** A server's (unmasked) binary frame of `payload`, made by ws. */
const { Sender } = ws as unknown as { Sender: { frame(data: Buffer, options: object): Buffer[] } };
const binaryFrame = (payload: Buffer) => Buffer.concat(Sender.frame(payload, { fin: true, opcode: 2, mask: false, readOnly: false }));

/** What the fake supervisor does with one accepted connection, given the client's key. */
type Script = (socket: Socket, key: string) => void;

let dir: string;
let socketPath: string;
let supervisor: NetServer;
let script: Script;
let api: Server;
let apiPort: number;
let splices: Splices;
/** A peer supervisor's keepalive for the next terminal (a Unix socket's has none). */
let peerKeepalive: Keepalive | undefined;
const received: Buffer[] = [];

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "splice-"));
  socketPath = join(dir, "supervisor.sock");
  supervisor = createServer((socket) => {
    let head = "";
    const onData = (chunk: Buffer) => {
      head += chunk.toString("latin1");
      const end = head.indexOf("\r\n\r\n");
      if (end < 0) return;
      socket.off("data", onData);
      socket.on("data", (more: Buffer) => received.push(more));
      const key = /sec-websocket-key: (\S+)/i.exec(head)?.[1] ?? "";
      script(socket, key);
    };
    socket.on("data", onData);
    socket.on("error", () => undefined);
  });
  await new Promise<void>((resolve) => supervisor.listen(socketPath, resolve));
  api = createHttpServer();
  api.on("upgrade", (request, socket, head) => {
    socket.on("error", () => socket.destroy());
    const key = request.headers["sec-websocket-key"] as string;
    splices.splice(socket, key, head, async (gone) => {
      const upgraded = await openTerminalUpgrade({ socketPath }, "/internal/sessions/abcdefghijkl/io", { "sec-websocket-key": key, "sec-websocket-version": "13" }, gone);
      return peerKeepalive ? { ...upgraded, keepalive: peerKeepalive } : upgraded;
    });
  });
  await new Promise<void>((resolve) => api.listen(0, "127.0.0.1", resolve));
  apiPort = (api.address() as { port: number }).port;
});
afterAll(async () => {
  await new Promise((resolve) => api.close(resolve));
  await new Promise((resolve) => supervisor.close(resolve));
  await rm(dir, { recursive: true, force: true });
});
afterEach(() => {
  received.length = 0;
  peerKeepalive = undefined;
});

const switching = (key: string) => `HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Accept: ${acceptKey(key)}\r\n\r\n`;

/** A client through a fresh Splices; resolves with the messages it got and how it was closed. */
async function client(): Promise<{ ws: WebSocket; messages: Buffer[]; closed: Promise<{ code: number; reason: string }> }> {
  splices = new Splices();
  const ws = new WebSocket(`ws://127.0.0.1:${apiPort}/v1/sessions/abcdefghijkl/io`, { perMessageDeflate: false });
  const messages: Buffer[] = [];
  ws.on("message", (data: Buffer) => messages.push(data));
  const closed = new Promise<{ code: number; reason: string }>((resolve) => ws.once("close", (code, reason) => resolve({ code, reason: reason.toString() })));
  ws.on("error", () => undefined);
  return { ws, messages, closed };
}

describe("the splice", () => {
  it("passes frames both ways unchanged", async () => {
    script = (socket, key) => {
      socket.write(switching(key));
      socket.write(binaryFrame(Buffer.from("hello")));
    };
    const { ws, messages } = await client();
    await waitFor("the frame", () => messages.length === 1 || undefined);
    expect(messages[0]!.toString()).toBe("hello");
    ws.send(Buffer.from("typed"));
    await waitFor("the client's frame at the supervisor", () => Buffer.concat(received).byteLength >= 2 + 4 + 5 || undefined);
    ws.terminate();
  });

  it("closes 1011 after whole frames only when the supervisor breaks while a large frame is under way", async () => {
    const large = binaryFrame(Buffer.alloc(512 * 1024, 1));
    script = (socket, key) => {
      socket.write(switching(key));
      socket.write(Buffer.concat([binaryFrame(Buffer.from("one")), binaryFrame(Buffer.from("two")), large.subarray(0, 200 * 1024)]));
      setTimeout(() => socket.destroy(), 100);
    };
    const { messages, closed } = await client();
    expect(await closed).toEqual({ code: 1011, reason: "supervisor unavailable" });
    expect(messages.map(String)).toEqual(["one", "two"]);
  });

  it("closes 1012 at a frame boundary when the api shuts down mid-frame", async () => {
    const large = binaryFrame(Buffer.alloc(256 * 1024, 2));
    script = (socket, key) => {
      socket.write(switching(key));
      socket.write(Buffer.concat([binaryFrame(Buffer.from("whole")), large.subarray(0, 100 * 1024)]));
    };
    const { messages, closed } = await client();
    await waitFor("the whole frame", () => messages.length === 1 || undefined);
    await splices.closeAll({ code: 1012, reason: "runner shutting down" }, 1_000);
    expect(await closed).toEqual({ code: 1012, reason: "runner shutting down" });
    expect(messages.map(String)).toEqual(["whole"]);
  });

  it("passes the supervisor's own close on, and adds nothing after it", async () => {
    script = (socket, key) => {
      socket.write(switching(key));
      // A close frame (1000) split across two writes, then the supervisor's end.
      const close = Buffer.from([0x88, 2 + 4, 0x03, 0xe8, ...Buffer.from("done")]);
      socket.write(close.subarray(0, 3));
      setTimeout(() => socket.end(close.subarray(3)), 50);
    };
    const { closed } = await client();
    expect(await closed).toEqual({ code: 1000, reason: "done" });
  });

  it("completes the handshake itself and closes 1012 when the session stays between replicas", async () => {
    script = (socket) => {
      const body = JSON.stringify({ error: "session_moving", message: "moving" });
      socket.end(`HTTP/1.1 503 Service Unavailable\r\ncontent-type: application/json\r\ncontent-length: ${body.length}\r\nconnection: close\r\n\r\n${body}`);
    };
    const { closed } = await client();
    expect((await closed).code).toBe(1012);
  });

  it("closes 1011 when a peer supervisor falls silent past its keepalive, and keeps one that pings open", async () => {
    const keepalive = { intervalMs: 200, timeoutMs: 300 };
    peerKeepalive = keepalive;
    const PING = Buffer.from([0x89, 0x00]);
    let pinging: NodeJS.Timeout | undefined;
    script = (socket, key) => {
      socket.write(switching(key));
      pinging = setInterval(() => socket.write(PING), 100);
      socket.once("close", () => clearInterval(pinging));
    };
    const healthy = await client();
    const outcome = await Promise.race([healthy.closed.then(() => "closed"), new Promise((resolve) => setTimeout(() => resolve("open"), 8 * keepalive.intervalMs))]);
    expect(outcome).toBe("open");
    // The client answered each ping, through the splice, to the supervisor.
    expect(received.length).toBeGreaterThan(0);
    clearInterval(pinging);
    const silencedAt = performance.now();
    expect(await healthy.closed).toEqual({ code: 1011, reason: "supervisor unavailable" });
    expect(performance.now() - silencedAt).toBeLessThan(keepalive.intervalMs + keepalive.timeoutMs + 2_000);
  });

  it("closes 1011 when the supervisor refuses the upgrade otherwise, or is not there at all", async () => {
    script = (socket) => socket.end("HTTP/1.1 400 Bad Request\r\ncontent-length: 2\r\nconnection: close\r\n\r\n{}");
    expect(await (await client()).closed).toEqual({ code: 1011, reason: "supervisor unavailable" });
    script = (socket) => socket.destroy();
    expect(await (await client()).closed).toEqual({ code: 1011, reason: "supervisor unavailable" });
  });
});
