/**
 * The terminal relay end to end on the simulated cluster: pod → attach → supervisor → internal
 * socket → api → WebSocket client, and stdin the other way. Output that the relay joins (many
 * attach messages arriving together) still carries every byte in order under consecutive seqs;
 * a `lastSeq` reconnect replays exactly what followed it, and one that fell behind the replay
 * buffer is told of the gap; many client messages sent at once all reach the pod in order.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { TerminalFrame } from "../../src/client/index.ts";
import { type KubeRunner, kubeSessionBody, startKubeRunner } from "../support/kube-runner.ts";
import { scrape, valueOf } from "../support/metrics.ts";
import { eventsUntil, framesUntilText, isStatus, textOf } from "../support/streams.ts";
import { waitFor } from "../support/wait.ts";

type ByteFrame = Extract<TerminalFrame, { kind: "bytes" }>;
const byteFrames = (frames: TerminalFrame[]) => frames.filter((frame): frame is ByteFrame => frame.kind === "bytes");
const seqs = (frames: ByteFrame[]) => frames.map((frame) => frame.seq);

/** What the simulated tty shows for a typed line: its echo, then `cat` printing it. */
const shown = (lines: string[]) => lines.map((line) => `${line}\r\n${line}\r\n`).join("");
const typed = (lines: string[]) => lines.map((line) => `${line}\r`).join("");
const numbered = (prefix: string, count: number) => Array.from({ length: count }, (_, index) => `${prefix} ${String(index).padStart(4, "0")}`);

describe("the terminal relay on the simulated cluster", () => {
  let runner: KubeRunner;
  beforeAll(async () => {
    runner = await startKubeRunner({ env: { RUNNER_REPLAY_BUFFER_BYTES: "20000" } });
  });
  afterAll(() => runner?.close());

  async function runningSession(): Promise<string> {
    const { sessionId } = await runner.client.createSession(kubeSessionBody());
    await eventsUntil(runner.client, sessionId, isStatus("running"));
    return sessionId;
  }

  it("relays a burst of output with every byte in order under seqs 1, 2, 3…, and replays exactly what followed a lastSeq", async () => {
    const sessionId = await runningSession();
    const terminal = runner.client.terminal(sessionId);
    // One stdin message of 200 lines: the pod answers with 400 attach messages in one go.
    const burst = numbered("burst", 200);
    await terminal.send(typed(burst));
    const first = byteFrames(await framesUntilText(terminal, shown(burst.slice(-1))));
    // A later line, read by itself, so the stream holds at least two entries.
    await terminal.send(typed(["after"]));
    const all = [...first, ...byteFrames(await framesUntilText(terminal, shown(["after"])))];
    expect(textOf(all)).toBe(shown([...burst, "after"]));
    expect(seqs(all)).toEqual(all.map((_, index) => index + 1));
    terminal.close();

    const cursor = first[0]!.seq;
    const resumed = runner.client.terminal(sessionId, { lastSeq: cursor });
    const replayed = await framesUntilText(resumed, shown(["after"]));
    expect(replayed[0]).toEqual({ kind: "control", message: { type: "seq", seq: cursor, app: "app", io: "tty" } });
    const expected = all.filter((frame) => frame.seq > cursor);
    expect(seqs(byteFrames(replayed))).toEqual(seqs(expected));
    expect(textOf(replayed)).toBe(textOf(expected));
    resumed.close();
    await runner.client.deleteSession(sessionId);
  });

  it("tells a reader that fell behind the replay buffer of the gap, then replays what is retained", async () => {
    const sessionId = await runningSession();
    const writer = runner.client.terminal(sessionId);
    // Four bursts read one after another (so at least four entries) of about 9 KB each,
    // through a 20 KB buffer: the first burst is evicted.
    const bursts = [0, 1, 2, 3].map((index) => numbered(`gap${index}`, 400));
    const received: ByteFrame[] = [];
    for (const burst of bursts) {
      await writer.send(typed(burst));
      received.push(...byteFrames(await framesUntilText(writer, shown(burst.slice(-1)))));
    }
    expect(textOf(received)).toBe(shown(bursts.flat()));
    writer.close();

    const reader = runner.client.terminal(sessionId, { lastSeq: 0 });
    const frames = await framesUntilText(reader, shown(bursts[3]!.slice(-1)));
    expect(frames[1]).toEqual({ kind: "control", message: { type: "gap", reason: "buffer_evicted" } });
    const retained = byteFrames(frames);
    expect(retained[0]!.seq).toBeGreaterThan(1);
    // What is retained is the newest entries, whole and in order.
    expect(retained).toEqual(received.filter((frame) => frame.seq >= retained[0]!.seq));
    reader.close();
    await runner.client.deleteSession(sessionId);
  });

  it("keeps the first 64 KiB of stdin sent between running and the attach, even when it came as one larger write", async () => {
    // Attaches are refused (and retried) until the stdin has reached the supervisor.
    runner.sim.faults.failNext({ verb: "get", resource: "pods", subresource: "attach", code: 503, count: 1000 });
    try {
      const stdinRelayed = async () => valueOf(await scrape(runner.baseUrl), "runner_terminal_bytes_total", { direction: "in" });
      const before = await stdinRelayed();
      const sessionId = await runningSession();
      const terminal = runner.client.terminal(sessionId);
      await terminal.send("a".repeat(70_000));
      await waitFor("the stdin to reach the supervisor's terminal", async () => (await stdinRelayed()) - before >= 70_000 || undefined);
      runner.sim.faults.clear();
      // The pod's tty echoes what reached it: the first 64 KiB, then what is typed after the attach.
      const kept = "a".repeat(64 * 1024);
      const echoed = await framesUntilText(terminal, kept);
      await terminal.send("x");
      echoed.push(...(await framesUntilText(terminal, "x")));
      expect(textOf(echoed)).toBe(`${kept}x`);
      terminal.close();
      await runner.client.deleteSession(sessionId);
    } finally {
      runner.sim.faults.clear();
    }
  });

  it("delivers many client messages sent at once to the pod, every byte in order", async () => {
    const sessionId = await runningSession();
    const terminal = runner.client.terminal(sessionId);
    await terminal.opened;
    const lines = numbered("key", 300);
    for (const line of lines) terminal.socket.send(new TextEncoder().encode(`${line}\r`));
    const frames = await framesUntilText(terminal, shown(lines.slice(-1)));
    expect(textOf(frames)).toBe(shown(lines));
    terminal.close();
    await runner.client.deleteSession(sessionId);
  });
});
