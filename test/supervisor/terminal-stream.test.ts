/**
 * The supervisor's side of a terminal (src/supervisor/terminal-stream.ts over ring-follower.ts)
 * on a real Duplex stream that records what reaches its transport: every replayed and live chunk
 * is its own frame with its own seq, what one pump sends leaves in one write, a slow socket is
 * waited for without losing or reordering anything, and stdin frames of one read reach the
 * workload as one write.
 */
import { Duplex } from "node:stream";
import { describe, expect, it } from "vitest";
import { decodeByteFrame } from "../../src/contract/streams.ts";
import { FrameDecoder, FrameKind, type IoFrame, encodeFrame } from "../../src/internal/io-frames.ts";
import type { Workload } from "../../src/sessions/backend-seam.ts";
import { Session } from "../../src/sessions/session.ts";
import { streamTerminal } from "../../src/supervisor/terminal-stream.ts";
import { waitFor } from "../support/wait.ts";

/** The supervisor's end of an internal connection; each transport write is kept as its chunks. */
class RecordingSocket extends Duplex {
  readonly writes: Buffer[][] = [];

  /** `slow`: each write completes a turn later, as a socket whose peer reads slowly does. */
  constructor(
    readonly slow = false,
    highWaterMark = 16 * 1024,
  ) {
    super({ writableHighWaterMark: highWaterMark });
  }

  override _write(chunk: Buffer, _encoding: BufferEncoding, done: (error?: Error | null) => void): void {
    this._writev([{ chunk }], done);
  }

  override _writev(chunks: { chunk: Buffer }[], done: (error?: Error | null) => void): void {
    this.writes.push(chunks.map((entry) => entry.chunk));
    if (this.slow) setImmediate(done);
    else done();
  }

  override _read(): void {}

  /** Every frame written so far, decoded. */
  frames(): IoFrame[] {
    return new FrameDecoder().push(Buffer.concat(this.writes.flat()));
  }

  /** The byte frames as `seq:text`. */
  outputs(): string[] {
    return this.frames().flatMap((frame) => {
      if (frame.kind !== FrameKind.binary) return [];
      const decoded = decodeByteFrame(frame.bytes)!;
      return [`${decoded.seq}:${Buffer.from(decoded.payload).toString()}`];
    });
  }
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

function follow(target: Session, socket: RecordingSocket, lastSeq = 0, holds = () => true): void {
  streamTerminal(target, target.apps.get("app")!, socket, lastSeq, 50, holds);
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

const stdinFrame = (text: string) => encodeFrame({ kind: FrameKind.binary, bytes: Buffer.from(text) });
const closeOf = (socket: RecordingSocket) => socket.frames().find((frame) => frame.kind === FrameKind.close);

describe("streamTerminal", () => {
  it("replays every retained chunk as its own frame and seq, all in one write after the seq frame", () => {
    const target = session();
    output(target, "one ", "two ", "three");
    const socket = new RecordingSocket();
    follow(target, socket);
    expect(socket.frames()[0]).toEqual({ kind: FrameKind.text, text: JSON.stringify({ type: "seq", seq: 0, app: "app", io: "tty" }) });
    expect(socket.outputs()).toEqual(["1:one ", "2:two ", "3:three"]);
    expect(socket.writes.map((chunks) => chunks.length)).toEqual([1, 3]);

    output(target, "four");
    expect(socket.outputs().at(-1)).toBe("4:four");
    socket.destroy();
  });

  it("replays only after lastSeq, and says so when the entries after it were evicted", () => {
    // A 10-byte buffer keeps the last two 4-byte entries: seqs 2 and 3.
    const target = session(10);
    output(target, "aaaa", "bbbb", "cccc");
    const resumed = new RecordingSocket();
    follow(target, resumed, 2);
    expect(resumed.outputs()).toEqual(["3:cccc"]);
    expect(resumed.frames().some((frame) => frame.kind === FrameKind.text && frame.text.includes("gap"))).toBe(false);

    const behind = new RecordingSocket();
    follow(target, behind, 0);
    expect(behind.frames()[1]).toEqual({ kind: FrameKind.text, text: JSON.stringify({ type: "gap", reason: "buffer_evicted" }) });
    expect(behind.outputs()).toEqual(["2:bbbb", "3:cccc"]);
    resumed.destroy();
    behind.destroy();
  });

  it("waits for a slow socket to drain and then sends the rest, in order", async () => {
    const target = session();
    const texts = Array.from({ length: 60 }, (_, index) => `chunk ${index} `);
    output(target, ...texts);
    const socket = new RecordingSocket(true, 64);
    follow(target, socket);
    const expected = texts.map((text, index) => `${index + 1}:${text}`);
    await waitFor("every chunk", () => socket.outputs().length === expected.length || undefined);
    expect(socket.outputs()).toEqual(expected);
    // It did wait: the replay left in several writes, not one.
    expect(socket.writes.length).toBeGreaterThan(2);
    socket.destroy();
  });

  it("hands the stdin frames of one read to the workload as one write, and drops stdin while nothing runs", async () => {
    const target = session();
    const written: string[] = [];
    const workload: Workload = {
      writeStdin: (_app, bytes) => void written.push(Buffer.from(bytes).toString()),
      resize: () => undefined,
      done: new Promise<void>(() => undefined),
      stop: async () => undefined,
    };
    const socket = new RecordingSocket();
    follow(target, socket);
    const stdin = (text: string) => encodeFrame({ kind: FrameKind.binary, bytes: Buffer.from(text) });

    // Read while the session is still starting: dropped.
    socket.push(stdin("too early"));
    await new Promise((resolve) => setImmediate(resolve));

    target.attachWorkload(workload);
    target.status = { kind: "running", endpoints: [] };
    const control = encodeFrame({ kind: FrameKind.text, text: JSON.stringify({ type: "resize", cols: 80, rows: 24 }) });
    socket.push(Buffer.concat([stdin("ab"), stdin("c"), stdin("d\r"), control, stdin("e")]));
    await waitFor("the stdin", () => written.length === 2 || undefined);
    expect(written).toEqual(["abcd\r", "e"]);
    socket.destroy();
  });
});

describe("streamTerminal fenced by the session's hold", () => {
  it("sends nothing it holds once the hold lapsed, and closes with 1012 at once", () => {
    const target = session();
    let held = true;
    const socket = new RecordingSocket();
    follow(target, socket, 0, () => held);
    output(target, "before ");
    expect(socket.outputs()).toEqual(["1:before "]);

    // The replica resumes from a pause longer than its hold: output read meanwhile is not sent.
    held = false;
    output(target, "after the pause");
    expect(socket.outputs()).toEqual(["1:before "]);
    expect(closeOf(socket)).toEqual({ kind: FrameKind.close, code: 1012, reason: "session moved to another replica" });
  });

  it("writes no input or resize into the pod once the hold lapsed, and says the input was not delivered", async () => {
    const target = session();
    const seen = running(target);
    let held = true;
    const socket = new RecordingSocket();
    follow(target, socket, 0, () => held);
    socket.push(stdinFrame("typed while held\r"));
    await waitFor("the input held", () => seen.stdin.length === 1 || undefined);

    held = false;
    const resize = encodeFrame({ kind: FrameKind.text, text: JSON.stringify({ type: "resize", cols: 100, rows: 30 }) });
    socket.push(Buffer.concat([resize, stdinFrame("typed after the lapse\r")]));
    await waitFor("the close", () => closeOf(socket));
    await new Promise((resolve) => setTimeout(resolve, 80));
    expect(seen.stdin).toEqual(["typed while held\r"]);
    expect(seen.resizes).toBe(0);
    expect(closeOf(socket)).toEqual({ kind: FrameKind.close, code: 1012, reason: "session moved to another replica; input not delivered" });
  });

  it("lets a graceful handover send what it holds while the hold lasts, then closes with 1012", () => {
    const target = session();
    const socket = new RecordingSocket();
    follow(target, socket, 0, () => true);
    target.pushOutput("app", Buffer.from("last words"), "tty");
    target.flushOutput();
    expect(socket.outputs()).toEqual(["1:last words"]);
    expect(closeOf(socket)).toBeUndefined();
  });
});
