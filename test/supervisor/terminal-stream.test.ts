/**
 * The supervisor's side of a terminal (src/supervisor/terminal-stream.ts over ring-follower.ts)
 * on a real WebSocket over a real socket: every replayed and live chunk is its own message with
 * its own seq, what one pump sends leaves in one socket write, a client that does not read is
 * waited for (the follower stops past the 1 MiB ceiling) without losing or reordering anything,
 * and stdin messages of one read reach the workload as one write.
 */
import { type Server, createServer } from "node:http";
import type { AddressInfo, Socket } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { WebSocket, WebSocketServer } from "ws";
import { decodeByteFrame } from "../../src/contract/streams.ts";
import type { Workload } from "../../src/sessions/backend-seam.ts";
import { Session } from "../../src/sessions/session.ts";
import { OUTPUT_CEILING_BYTES, streamTerminal } from "../../src/supervisor/terminal-stream.ts";
import { waitFor } from "../support/wait.ts";

type Message = { binary: boolean; data: Buffer };

/** Both ends of one terminal: the supervisor's WebSocket, and a client that records what it receives. */
type Pair = {
  server: WebSocket;
  /** The server's socket writes: how many chunks each one carried. */
  writes: number[];
  client: WebSocket;
  clientSocket: Socket;
  messages: Message[];
  closed: Promise<{ code: number; reason: string }>;
  texts(): string[];
  outputs(): string[];
};

let http: Server;
let wss: WebSocketServer;
let port: number;
const accepted: WebSocket[] = [];
beforeAll(async () => {
  wss = new WebSocketServer({ noServer: true, perMessageDeflate: false });
  http = createServer();
  http.on("upgrade", (request, socket, head) => wss.handleUpgrade(request, socket, head, (ws) => accepted.push(ws)));
  await new Promise<void>((resolve) => http.listen(0, "127.0.0.1", resolve));
  port = (http.address() as AddressInfo).port;
});
afterAll(async () => {
  for (const ws of wss.clients) ws.terminate();
  await new Promise((resolve) => http.close(resolve));
});

async function pair(): Promise<Pair> {
  const client = new WebSocket(`ws://127.0.0.1:${port}/`, { perMessageDeflate: false });
  const messages: Message[] = [];
  client.on("message", (data: Buffer, binary: boolean) => messages.push({ binary, data }));
  const closed = new Promise<{ code: number; reason: string }>((resolve) => client.once("close", (code, reason) => resolve({ code, reason: reason.toString() })));
  await new Promise((resolve) => client.once("open", resolve));
  await waitFor("the server's socket", () => accepted.length > 0 || undefined);
  const server = accepted.shift()!;
  // Each call of the transport's write functions is one write to the kernel.
  const raw = (server as unknown as { _socket: Socket & { _writev: Function; _write: Function } })._socket;
  const writes: number[] = [];
  const writev = raw._writev.bind(raw);
  const write = raw._write.bind(raw);
  raw._writev = (chunks: unknown[], done: unknown) => (writes.push(chunks.length), writev(chunks, done));
  raw._write = (chunk: unknown, encoding: unknown, done: unknown) => (writes.push(1), write(chunk, encoding, done));
  return {
    server,
    writes,
    client,
    clientSocket: (client as unknown as { _socket: Socket })._socket,
    messages,
    closed,
    texts: () => messages.filter((message) => !message.binary).map((message) => message.data.toString()),
    outputs: () =>
      messages.flatMap((message) => {
        if (!message.binary) return [];
        const decoded = decodeByteFrame(message.data)!;
        return [`${decoded.seq}:${Buffer.from(decoded.payload).toString()}`];
      }),
  };
}

function session(replayBufferBytes = 1_000_000): Session {
  return new Session({
    launch: {
      sessionId: "terminalstrm",
      createdAt: new Date().toISOString(),
      mode: "run",
      apps: [{ name: "app", entryRelativePath: "telo.yaml", ports: [], io: "tty" }],
      env: {},
      config: { image: "i", pullPolicy: "missing" },
      bundle: { entryRelativePath: "telo.yaml", files: [] },
      inspect: false,
      selfContained: false,
    },
    agent: undefined,
    replayBufferBytes,
    reloadLimit: 30,
    now: new Date(),
  });
}

/** One replay entry per call. */
function output(target: Session, ...texts: string[]): void {
  for (const text of texts) {
    target.pushOutput("app", Buffer.from(text), "tty");
    target.flushOutput();
  }
}

function follow(target: Session, ends: Pair, lastSeq = 0, holds = () => true): void {
  streamTerminal(target, target.apps.get("app")!, ends.server, lastSeq, 50, holds);
}

/** A running session whose workload records the stdin and resizes it is given. */
function running(target: Session): { stdin: string[]; resizes: number } {
  const seen = { stdin: [] as string[], resizes: 0 };
  target.attachWorkload({
    writeStdin: (_app, bytes) => void seen.stdin.push(Buffer.from(bytes).toString()),
    resize: () => void (seen.resizes += 1),
    done: new Promise<void>(() => undefined),
    stop: async () => undefined,
  });
  target.status = { kind: "running", endpoints: [] };
  return seen;
}

describe("streamTerminal", () => {
  it("replays every retained chunk as its own message and seq, all in one write after the seq message", async () => {
    const target = session();
    output(target, "one ", "two ", "three");
    const ends = await pair();
    follow(target, ends);
    await waitFor("the replay", () => ends.outputs().length === 3 || undefined);
    expect(ends.texts()[0]).toBe(JSON.stringify({ type: "seq", seq: 0, app: "app", io: "tty" }));
    expect(ends.outputs()).toEqual(["1:one ", "2:two ", "3:three"]);
    // The seq message alone, then the three chunks (a header and a payload each) in one write.
    expect(ends.writes).toEqual([2, 6]);

    output(target, "four");
    await waitFor("the live chunk", () => ends.outputs().at(-1) === "4:four" || undefined);
    ends.client.terminate();
  });

  it("replays only after lastSeq, and says so when the entries after it were evicted", async () => {
    // A 10-byte buffer keeps the last two 4-byte entries: seqs 2 and 3.
    const target = session(10);
    output(target, "aaaa", "bbbb", "cccc");
    const resumed = await pair();
    follow(target, resumed, 2);
    await waitFor("the replay", () => resumed.outputs().length === 1 || undefined);
    expect(resumed.outputs()).toEqual(["3:cccc"]);
    expect(resumed.texts().some((text) => text.includes("gap"))).toBe(false);

    const behind = await pair();
    follow(target, behind, 0);
    await waitFor("the replay", () => behind.outputs().length === 2 || undefined);
    expect(behind.texts()[1]).toBe(JSON.stringify({ type: "gap", reason: "buffer_evicted" }));
    expect(behind.outputs()).toEqual(["2:bbbb", "3:cccc"]);
    resumed.client.terminate();
    behind.client.terminate();
  });

  it("stops at the 1 MiB ceiling while the client does not read, then sends the rest in order", async () => {
    const target = session(64 * 1024 * 1024);
    const ends = await pair();
    ends.clientSocket.pause();
    follow(target, ends);
    const chunk = "x".repeat(60 * 1024);
    const texts = Array.from({ length: 128 }, (_, index) => `${index}`.padStart(6, "0") + chunk);
    output(target, ...texts);
    // About 7.5 MiB written by the session; the follower stops once 1 MiB is unsent.
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(ends.server.bufferedAmount).toBeLessThan(OUTPUT_CEILING_BYTES + 128 * 1024);
    ends.clientSocket.resume();
    const expected = texts.map((text, index) => `${index + 1}:${text}`);
    await waitFor("every chunk", () => ends.outputs().length === expected.length || undefined);
    expect(ends.outputs()).toEqual(expected);
    ends.client.terminate();
  });

  it("hands the stdin messages of one read to the workload as one write, and drops stdin while nothing runs", async () => {
    const target = session();
    const written: string[] = [];
    const workload: Workload = {
      writeStdin: (_app, bytes) => void written.push(Buffer.from(bytes).toString()),
      resize: () => undefined,
      done: new Promise<void>(() => undefined),
      stop: async () => undefined,
    };
    const ends = await pair();
    follow(target, ends);

    // Read while the session is still starting: dropped.
    ends.client.send(Buffer.from("too early"));
    await new Promise((resolve) => setTimeout(resolve, 50));

    target.attachWorkload(workload);
    target.status = { kind: "running", endpoints: [] };
    // One socket write of five messages: they arrive in one read.
    ends.clientSocket.cork();
    for (const part of ["ab", "c", "d\r"]) ends.client.send(Buffer.from(part));
    ends.client.send(JSON.stringify({ type: "resize", cols: 80, rows: 24 }));
    ends.client.send(Buffer.from("e"));
    ends.clientSocket.uncork();
    await waitFor("the stdin", () => written.length === 2 || undefined);
    expect(written).toEqual(["abcd\r", "e"]);
    ends.client.terminate();
  });
});

describe("streamTerminal fenced by the session's hold", () => {
  it("sends nothing it holds once the hold lapsed, and closes with 1012 at once", async () => {
    const target = session();
    let held = true;
    const ends = await pair();
    follow(target, ends, 0, () => held);
    output(target, "before ");
    await waitFor("the first chunk", () => ends.outputs().length === 1 || undefined);

    // The replica resumes from a pause longer than its hold: output read meanwhile is not sent.
    held = false;
    output(target, "after the pause");
    expect(await ends.closed).toEqual({ code: 1012, reason: "session moved to another replica" });
    expect(ends.outputs()).toEqual(["1:before "]);
  });

  it("writes no input or resize into the pod once the hold lapsed, and says the input was not delivered", async () => {
    const target = session();
    const seen = running(target);
    let held = true;
    const ends = await pair();
    follow(target, ends, 0, () => held);
    ends.client.send(Buffer.from("typed while held\r"));
    await waitFor("the input held", () => seen.stdin.length === 1 || undefined);

    held = false;
    ends.client.send(JSON.stringify({ type: "resize", cols: 100, rows: 30 }));
    ends.client.send(Buffer.from("typed after the lapse\r"));
    expect(await ends.closed).toEqual({ code: 1012, reason: "session moved to another replica; input not delivered" });
    await new Promise((resolve) => setTimeout(resolve, 80));
    expect(seen.stdin).toEqual(["typed while held\r"]);
    expect(seen.resizes).toBe(0);
  });

  it("lets a graceful handover send what it holds while the hold lasts", async () => {
    const target = session();
    const ends = await pair();
    follow(target, ends, 0, () => true);
    target.pushOutput("app", Buffer.from("last words"), "tty");
    target.flushOutput();
    await waitFor("the chunk", () => ends.outputs().length === 1 || undefined);
    expect(ends.outputs()).toEqual(["1:last words"]);
    expect(ends.client.readyState).toBe(WebSocket.OPEN);
    ends.client.terminate();
  });
});
