// The debug relay against a real HTTP server on 127.0.0.1 that behaves like a kernel inspector
// (replays frames after `last-event-id`) and misbehaves on purpose: refuses, answers without a
// body, interleaves comments and garbage, splits frames across writes and drops mid-stream.
import { createServer, type IncomingHttpHeaders, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import type { DebugFrame } from "../../../src/contract/wire.ts";
import { MAX_BLOCK_CHARS, relayDebugStream } from "../../../src/kube/io/debug-relay.ts";
import { createLogger } from "../../../src/log.ts";
import { freePort } from "../../support/ports.ts";
import { waitFor } from "../../support/wait.ts";

type Step = (res: ServerResponse, after: number) => void;

interface Inspector {
  url: string;
  requests: IncomingHttpHeaders[];
}

const servers: Server[] = [];
const aborts: AbortController[] = [];

afterEach(async () => {
  for (const a of aborts.splice(0)) a.abort();
  await Promise.all(
    servers.splice(0).map(
      (server) =>
        new Promise<void>((resolve) => {
          server.close(() => resolve());
          server.closeAllConnections();
        }),
    ),
  );
});

/** Answers the n-th request with steps[n]; once the script is used up, holds an idle stream open. */
async function inspector(steps: Step[], port = 0): Promise<Inspector> {
  const requests: IncomingHttpHeaders[] = [];
  const server = createServer((req, res) => {
    requests.push(req.headers);
    const after = Number(req.headers["last-event-id"] ?? 0);
    const step = steps[requests.length - 1];
    if (step) return step(res, after);
    res.writeHead(200, { "content-type": "text/event-stream" });
    res.write(": idle\n\n");
  });
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(port, "127.0.0.1", () => resolve()));
  const { port: bound } = server.address() as AddressInfo;
  return { url: `http://127.0.0.1:${bound}/events`, requests };
}

const frame = (n: number): DebugFrame => ({ kind: "event", timestamp: "2026-11-29T16:30:00.000Z", event: `E${n}` });
const block = (n: number) => `id: ${n}\ndata: ${JSON.stringify(frame(n))}\n\n`;
const tick = () => new Promise((resolve) => setTimeout(resolve, 15));

function stream(res: ServerResponse): void {
  res.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache" });
}

type LogLine = { level: string; message: string; [field: string]: unknown };

/** A real logger at debug level whose lines are kept, parsed. */
function capturedLog() {
  const lines: LogLine[] = [];
  return { lines, log: createLogger("test", "debug", (line) => lines.push(JSON.parse(line) as LogLine)) };
}

function relay(url: string) {
  const frames: DebugFrame[] = [];
  const controller = new AbortController();
  aborts.push(controller);
  const { lines, log } = capturedLog();
  const done = relayDebugStream(url, (f) => frames.push(f), controller.signal, { retryMs: 20, log });
  return { frames, controller, done, lines };
}

describe("relayDebugStream", () => {
  it("delivers every frame once, in order, across refusals, garbage and a mid-stream drop", async () => {
    const server = await inspector([
      (res) => {
        res.writeHead(503, { "content-type": "text/plain" });
        res.end("kernel booting");
      },
      (res) => {
        res.writeHead(204);
        res.end();
      },
      async (res) => {
        stream(res);
        res.write(": heartbeat\n\n");
        res.write(block(1));
        res.write("id: 99\ndata: {not json\n\n");
        res.write("data: [1, 2]\n\n");
        res.write("event: only-a-name\n\n");
        res.write(`id: 2\ndata: {"kind":"event",\ndata:    "timestamp":"2026-11-29T16:30:00.000Z","event":"E2"}\n\n`);
        const third = block(3);
        res.write(third.slice(0, 20));
        await tick();
        res.write(third.slice(20));
        await tick();
        // Half of frame 4 arrives, then the connection dies: it must be replayed, not half-read.
        res.write(block(4).slice(0, -1));
        await tick();
        res.destroy();
      },
      (res, after) => {
        stream(res);
        for (const n of [1, 2, 3, 4, 5]) if (n > after) res.write(block(n));
        res.write(`data: ${JSON.stringify({ kind: "event", event: "no-id" })}\r\n\r\n`);
        res.end();
      },
    ]);
    const { frames, done, controller } = relay(server.url);
    await waitFor("the relay to follow the fifth stream", () => server.requests.length >= 5);
    controller.abort();
    await done;

    expect(frames.map((f) => f.event)).toEqual(["E1", "E2", "E3", "E4", "E5", "no-id"]);
    expect(frames[1]).toEqual(frame(2));
    expect(server.requests.map((h) => h.accept)).toEqual(Array(5).fill("text/event-stream"));
    // Nothing delivered before the third request; the unparseable id 99 was never delivered;
    // the id-less frame does not reset the position.
    expect(server.requests.map((h) => h["last-event-id"])).toEqual([undefined, undefined, undefined, "3", "5"]);
  });

  it("keeps retrying while nothing listens, then follows the stream once the inspector is up", async () => {
    const port = await freePort();
    const { frames, done, controller } = relay(`http://127.0.0.1:${port}/events`);
    await new Promise((resolve) => setTimeout(resolve, 100));
    await inspector(
      [
        (res) => {
          stream(res);
          res.write(block(7));
        },
      ],
      port,
    );
    await waitFor("the first frame", () => frames.length === 1);
    controller.abort();
    await done;
    expect(frames).toEqual([frame(7)]);
  });

  it("resolves when aborted, closes its stream and reconnects no more", async () => {
    let closed = false;
    const server = await inspector([
      (res) => {
        stream(res);
        res.write(block(1));
        res.on("close", () => (closed = true));
      },
    ]);
    const { frames, done, controller } = relay(server.url);
    await waitFor("the frame", () => frames.length === 1);
    controller.abort();
    await expect(done).resolves.toBeUndefined();
    await waitFor("the stream to be closed by the relay", () => closed);
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(server.requests).toHaveLength(1);
  });

  it("resolves at once when the signal is already aborted", async () => {
    const server = await inspector([]);
    const controller = new AbortController();
    controller.abort();
    const { lines, log } = capturedLog();
    await relayDebugStream(server.url, () => undefined, controller.signal, { log });
    expect(server.requests).toHaveLength(0);
    expect(lines).toEqual([]);
  });

  it("says on the debug log why it reconnects: the inspector's answer, the end of the stream, a refused connection", async () => {
    const server = await inspector([
      (res) => {
        res.writeHead(503, { "content-type": "text/plain" });
        res.end("kernel booting");
      },
      (res) => {
        stream(res);
        res.end(block(1));
      },
    ]);
    const { frames, done, controller, lines } = relay(server.url);
    await waitFor("the third connection", () => server.requests.length >= 3);
    controller.abort();
    await done;
    expect(frames.map((f) => f.event)).toEqual(["E1"]);
    const reconnects = lines.filter((line) => line.message === "debug stream reconnecting");
    expect(reconnects.slice(0, 2)).toEqual([
      expect.objectContaining({ level: "debug", url: server.url, reason: "the inspector answered 503", inMs: 20 }),
      expect.objectContaining({ level: "debug", url: server.url, reason: "the stream ended", inMs: 20 }),
    ]);

    const port = await freePort();
    const refused = relay(`http://127.0.0.1:${port}/events`);
    await waitFor("a logged refusal", () => refused.lines.some((line) => line.message === "debug stream reconnecting"));
    refused.controller.abort();
    await refused.done;
    expect(String(refused.lines[0]!.reason)).toMatch(/ECONNREFUSED/);
  });

  it("survives a consumer that throws: the frame counts as delivered, the failure is logged, the stream goes on", async () => {
    const server = await inspector([
      (res) => {
        stream(res);
        res.write(block(1));
        res.write(block(2));
      },
    ]);
    const seen: string[] = [];
    const controller = new AbortController();
    aborts.push(controller);
    const { lines, log } = capturedLog();
    const done = relayDebugStream(
      server.url,
      (f) => {
        seen.push(String(f.event));
        if (f.event === "E1") throw new Error("consumer bug");
      },
      controller.signal,
      { retryMs: 20, log },
    );
    await waitFor("both frames", () => seen.length === 2);
    controller.abort();
    await done;
    expect(seen).toEqual(["E1", "E2"]);
    expect(server.requests).toHaveLength(1);
    expect(lines).toEqual([
      expect.objectContaining({ level: "error", message: "handling a debug frame failed", url: server.url, event: "E1" }),
    ]);
    expect(JSON.stringify(lines[0]!.error)).toContain("consumer bug");
  });

  it("drops a block that outgrows the bound and goes on with the next one", async () => {
    const server = await inspector([
      async (res) => {
        stream(res);
        res.write(block(1));
        res.write(`id: 2\ndata: {"kind":"event","event":"huge","payload":"`);
        const piece = "x".repeat(64 * 1024);
        for (let written = 0; written <= MAX_BLOCK_CHARS; written += piece.length) res.write(piece);
        await tick();
        res.write(`"}\n\n`);
        res.write(block(3));
      },
    ]);
    const { frames, done, controller } = relay(server.url);
    await waitFor("the frame after the oversized one", () => frames.some((f) => f.event === "E3"));
    controller.abort();
    await done;
    expect(frames.map((f) => f.event)).toEqual(["E1", "E3"]);
    expect(server.requests).toHaveLength(1);
  });
});

describe("relayDebugStream without id lines", () => {
  const plain = (n: number, timestamp = "2026-11-29T16:30:00.000Z") => `data: ${JSON.stringify({ ...frame(n), timestamp })}\n\n`;
  /** One connection's answer: `text`, then the end of the stream (`end`) or an open stream. */
  const answer =
    (text: string, end = true): Step =>
    (res) => {
      stream(res);
      if (end) res.end(text);
      else res.write(text);
    };

  it("never relays a frame twice when the inspector replays its whole buffer on reconnect", async () => {
    // The kernel's inspector: every connection gets its buffer from the start, then new frames.
    const server = await inspector([
      answer(plain(1) + plain(2)),
      answer(plain(1) + plain(2) + plain(3)),
      answer(plain(1) + plain(2) + plain(3) + plain(4), false),
    ]);
    const { frames } = relay(server.url);
    // E4 comes after the third replay on the same stream: any frame relayed twice is in by then.
    await waitFor("the fourth frame", () => frames.some((f) => f.event === "E4"));
    expect(frames.map((f) => f.event)).toEqual(["E1", "E2", "E3", "E4"]);
  });

  it("relays a restarted kernel's frames, which its new timestamps tell from a replay", async () => {
    const server = await inspector([
      answer(plain(1) + plain(2)),
      answer(plain(1, "2026-11-29T16:31:00.000Z") + plain(2, "2026-11-29T16:31:00.000Z"), false),
    ]);
    const { frames } = relay(server.url);
    await waitFor("four frames", () => frames.length >= 4);
    expect(frames.map((f) => `${f.event}@${f.timestamp}`)).toEqual([
      "E1@2026-11-29T16:30:00.000Z",
      "E2@2026-11-29T16:30:00.000Z",
      "E1@2026-11-29T16:31:00.000Z",
      "E2@2026-11-29T16:31:00.000Z",
    ]);
  });
});
