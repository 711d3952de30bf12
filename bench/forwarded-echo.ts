/**
 * Section 9, a forwarded terminal (docs/replicas.md "How it is built"): three replicas settled,
 * and sessions each with its terminal open twice at once, through the api of the replica that
 * owns it (its own supervisor, over the Unix socket) and through another replica's api
 * (forwarded to the owner's supervisor over the TCP peer link). Keystroke → echo round trips are taken in
 * batches alternating between the two, so both see the same machine. Target: the forwarded p99
 * within 1 ms of the owner's.
 */
import type { Terminal } from "../src/client/index.ts";
import { waitFor } from "../test/support/wait.ts";
import { ByteCounter } from "./support/bytes.ts";
import { shardsSettled, startReplica } from "./support/replicas.ts";
import type { Row } from "./support/report.ts";
import type { BenchRunner, EntryMode } from "./support/runner.ts";
import { startSession } from "./support/sessions.ts";
import { summarize } from "./support/stats.ts";
import { type Side, echoBatch } from "./terminal.ts";

export type ForwardedEchoOptions = { sessions: number; batches: number; perBatch: number };
export const FORWARDED_ECHO_FULL: ForwardedEchoOptions = { sessions: 3, batches: 8, perBatch: 25 };
export const FORWARDED_ECHO_QUICK: ForwardedEchoOptions = { sessions: 1, batches: 2, perBatch: 25 };

const SECTION = "9 replica handover";
const SERVED_MS = 30_000;

export async function runForwardedEcho(mode: EntryMode, options: ForwardedEchoOptions): Promise<Row[]> {
  const owner = await startReplica(mode, "bench-a");
  const started: BenchRunner[] = [owner];
  try {
    const other = await startReplica(mode, "bench-b", owner);
    started.push(other, await startReplica(mode, "bench-c", owner));
    await shardsSettled(owner, ["bench-a", "bench-b", "bench-c"]);
    const atOwner: number[] = [];
    const forwarded: number[] = [];
    for (let s = 0; s < options.sessions; s++) {
      // Created through a replica, a session is minted into a shard that replica holds.
      const { sessionId } = await startSession(owner.client);
      const direct = await servedSide(owner, sessionId);
      const relayed = await servedSide(other, sessionId);
      try {
        // Warm-up of both paths, discarded.
        await echoBatch(direct.side, 20);
        await echoBatch(relayed.side, 20);
        for (let b = 0; b < options.batches; b++) {
          // Alternating which goes first, so neither always follows the other's ^U burst.
          const order = b % 2 === 0 ? [direct, relayed] : [relayed, direct];
          for (const path of order) (path === direct ? atOwner : forwarded).push(...(await echoBatch(path.side, options.perBatch)));
        }
      } finally {
        direct.terminal.close();
        relayed.terminal.close();
      }
    }
    const own = summarize(atOwner);
    const through = summarize(forwarded);
    const p99Gap = through.p99 - own.p99;
    const note = `${options.sessions} sessions × ${options.batches} batches of ${options.perBatch} keystrokes per path, 3 replicas; baseline: the same terminal through its owner's api`;
    return [
      { section: SECTION, metric: "forwarded terminal: echo round trip (p50)", value: through, baseline: own, unit: "ms", compare: "p50", note },
      {
        section: SECTION,
        metric: "forwarded terminal: echo round trip (p99)",
        value: through,
        baseline: own,
        unit: "ms",
        compare: "p99",
        target: "p99 ≤ owner's + 1 ms",
        verdict: p99Gap <= 1 ? "met" : "MISSED",
        note: `forwarded p99 − owner's p99 = ${p99Gap.toFixed(2)} ms`,
      },
    ];
  } finally {
    for (const runner of started.reverse()) await runner.close();
  }
}

/**
 * The session's terminal through `via`, once a replica serves it (its `seq` frame came): a
 * replica's view of who holds a shard may lag the Leases by a moment, and it answers "moving"
 * meanwhile.
 */
async function servedSide(via: BenchRunner, sessionId: string): Promise<{ terminal: Terminal; side: Side }> {
  return waitFor(`the terminal of ${sessionId} served through ${via.client.baseUrl}`, async () => {
    const terminal = via.client.terminal(sessionId);
    const frames = terminal.frames();
    const first = await frames.next();
    if (first.done || first.value.kind !== "control" || first.value.message.type !== "seq") {
      terminal.close();
      await new Promise((resolve) => setTimeout(resolve, 100));
      return undefined;
    }
    const counter = new ByteCounter();
    void (async () => {
      for await (const frame of frames) if (frame.kind === "bytes") counter.add(frame.payload.byteLength);
    })();
    return { terminal, side: { counter, send: (bytes: Uint8Array) => terminal.socket.send(bytes) } };
  }, SERVED_MS);
}
