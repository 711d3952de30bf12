/**
 * Terminals spliced to their supervisor (docs/relay.md "The terminal") on two replicas of the
 * simulated cluster: through the owner's own api (the Unix socket) and through the other
 * replica's api (the TCP peer link), a terminal echoes and a `lastSeq` reconnect replays exactly
 * what followed; the owner's supervisor killed while bursts of output flow closes both clients
 * with 1011, after whole frames only, every byte received in order under consecutive seqs.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { TerminalFrame } from "../../src/client/index.ts";
import { shardOf } from "../../src/contract/ids.ts";
import { type ClusterRunner, runningSession } from "../support/kube-runner.ts";
import { type ReplicaSet, startReplicaSet } from "../support/replica-set.ts";
import { framesToClose, framesUntilText, textOf } from "../support/streams.ts";

const SHARDS = 4;
type ByteFrame = Extract<TerminalFrame, { kind: "bytes" }>;
const byteFrames = (frames: TerminalFrame[]) => frames.filter((frame): frame is ByteFrame => frame.kind === "bytes");

describe("a terminal spliced to its supervisor, locally and over the peer link", () => {
  let set: ReplicaSet;
  let a: ClusterRunner;
  let b: ClusterRunner;
  beforeAll(async () => {
    set = await startReplicaSet(["a", "b"], { shards: SHARDS, leaseSeconds: 3, startMs: 20_000 });
    a = set.replicas.a!;
    b = set.replicas.b!;
  }, 60_000);
  afterAll(() => set?.close());

  /** A running session whose shard a holds (created through a, which admits what it owns). */
  async function sessionOnA(): Promise<string> {
    const sessionId = await runningSession(a);
    const holder = (await set.shardLeases())[shardOf(sessionId, SHARDS)]?.holder;
    expect(holder).toBe("replica-a");
    return sessionId;
  }

  it("echoes and replays after lastSeq the same through the owner's api and through the other replica's", async () => {
    const sessionId = await sessionOnA();
    for (const [via, name] of [
      [a, "local"],
      [b, "peer"],
    ] as const) {
      const terminal = via.client.terminal(sessionId);
      await terminal.send(`${name}-one\r`);
      const first = byteFrames(await framesUntilText(terminal, `${name}-one\r\n${name}-one`));
      await terminal.send(`${name}-two\r`);
      const second = byteFrames(await framesUntilText(terminal, `${name}-two\r\n${name}-two`));
      terminal.close();
      const cursor = first.at(-1)!.seq;
      const resumed = via.client.terminal(sessionId, { lastSeq: cursor });
      const replayed = await framesUntilText(resumed, `${name}-two\r\n${name}-two`);
      expect(replayed[0]).toMatchObject({ kind: "control", message: { type: "seq", seq: cursor } });
      expect(textOf(byteFrames(replayed))).toBe(textOf(second));
      resumed.close();
    }
    await a.client.deleteSession(sessionId);
  });

  it("closes both clients with 1011 after whole frames when the owner's supervisor is killed mid-burst", async () => {
    const sessionId = await sessionOnA();
    const local = a.client.terminal(sessionId);
    const peer = b.client.terminal(sessionId);
    const drained = [framesToClose(local), framesToClose(peer)];
    // 60 KB lines at a time: cat's echo and output come back as frames of up to 64 KiB.
    const line = "y".repeat(2_000);
    const burst = `${Array.from({ length: 30 }, () => line).join("\r")}\r`;
    const typing = setInterval(() => void local.send(burst).catch(() => undefined), 20);
    await new Promise((resolve) => setTimeout(resolve, 500));
    await a.stopSupervisor("SIGKILL");
    const [localFrames, peerFrames] = await Promise.all(drained);
    clearInterval(typing);
    for (const [terminal, frames] of [
      [local, localFrames!],
      [peer, peerFrames!],
    ] as const) {
      expect(await terminal.closed).toEqual({ code: 1011, reason: "supervisor unavailable" });
      const seqs = byteFrames(frames).map((frame) => frame.seq);
      expect(seqs.length).toBeGreaterThan(2);
      expect(seqs).toEqual(seqs.map((_, index) => seqs[0]! + index));
      // Only what the app printed: the typed lines and their echo, nothing cut or foreign.
      expect(textOf(byteFrames(frames))).toMatch(/^[y\r\n]*$/);
    }
    await a.startSupervisor();
  });
});
