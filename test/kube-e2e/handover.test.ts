/**
 * Output across a handover (docs/replicas.md "Output across a handover"): three replicas, an app
 * printing a counter (`tick <n>` every 100 ms). A client reading its terminal through one
 * replica while the owner leaves reconnects with its seq: after a graceful exit (SIGTERM) it gets
 * every line exactly once and in order, the ones printed while no replica was attached read
 * back from the container log; after a kill (SIGKILL) every line it gets is new and in order,
 * and what it cannot get is reported as a `gap`. Seqs and event ids only ever grow.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { shardOf } from "../../src/contract/ids.ts";
import { type ClusterRunner, ON_REAL_CLUSTER, kubeSessionBody } from "../support/kube-runner.ts";
import { eventsUntil, isStatus, textOf } from "../support/streams.ts";
import { type ReplicaSet, startReplicaSet } from "../support/replica-set.ts";
import { gapsIn, readUntilTick, reconnectTerminal, seqsOf, ticksOf } from "../support/ticking-terminal.ts";

const SHARDS = 8;
const LEASE_SECONDS = 3;
const START_MS = ON_REAL_CLUSTER ? 90_000 : 20_000;
const TICK = { "tick-ms": 100 };

describe(`output across a handover, three replicas on one ${ON_REAL_CLUSTER ? "real" : "simulated"} cluster`, () => {
  let set: ReplicaSet;
  const replicas: Record<string, ClusterRunner> = {};

  beforeAll(async () => {
    set = await startReplicaSet(["a", "b", "c"], { shards: SHARDS, leaseSeconds: LEASE_SECONDS, startMs: START_MS });
    Object.assign(replicas, set.replicas);
  }, 3 * START_MS);
  afterAll(() => set?.close());

  const shardHolders = async () => (await set.shardLeases()).map((lease) => lease?.holder);
  const ownerOf = async (sessionId: string) => (await shardHolders())[shardOf(sessionId, SHARDS)];
  const ticking = async (via: ClusterRunner) => {
    const { sessionId } = await via.client.createSession(kubeSessionBody(TICK));
    await eventsUntil(via.client, sessionId, isStatus("running"));
    return sessionId;
  };
  const reconnect = (via: ClusterRunner, sessionId: string, lastSeq: number) => reconnectTerminal(via.client, sessionId, lastSeq, START_MS);

  it("shows every line exactly once, in order, across a graceful handover (SIGTERM of the owner)", async () => {
    const sessionId = await ticking(replicas.b!);
    expect(await ownerOf(sessionId)).toBe("replica-b");
    const events = await eventsUntil(replicas.a!.client, sessionId, isStatus("running"));
    const lastEventId = Math.max(...events.flatMap((item) => ("id" in item ? [item.id] : [])));

    // A terminal through a non-owner; the owner leaves while it reads.
    const terminal = replicas.a!.client.terminal(sessionId);
    const before = await readUntilTick(terminal, 5);
    const leaving = replicas.b!.stopSupervisor("SIGTERM");
    for await (const frame of terminal.frames()) before.push(frame);
    expect((await terminal.closed).code).toBe(1012);
    await leaving;
    const stoppedAt = ticksOf(textOf(before)).at(-1)!;

    const lastSeq = Math.max(...seqsOf(before));
    const again = await reconnect(replicas.a!, sessionId, lastSeq);
    expect(again.first.message).toMatchObject({ type: "seq", seq: lastSeq });
    // Well past the lines printed while no replica was attached.
    const after = await readUntilTick(again.terminal, stoppedAt + 30);
    again.terminal.close();
    expect(["replica-a", "replica-c"]).toContain(await ownerOf(sessionId));

    expect(gapsIn(after)).toBe(0);
    const ticks = ticksOf(textOf([...before, ...after]));
    // On a failure, what the client was shown, and where the handover fell.
    const shown = `shown before: ${JSON.stringify(textOf(before))}, after: ${JSON.stringify(textOf(after))}`;
    expect(ticks, shown).toEqual(Array.from({ length: ticks.length }, (_, index) => index + 1));
    const seqs = [...seqsOf(before), ...seqsOf(after)];
    expect(seqs).toEqual([...seqs].sort((x, y) => x - y));
    expect(new Set(seqs).size).toBe(seqs.length);
    expect(seqsOf(after)[0]).toBe(lastSeq + 1);

    // The event stream continues after the id the client holds: no gap, no id again.
    const resumed = await eventsUntil(replicas.a!.client, sessionId, isStatus("running"), { lastEventId });
    expect(resumed.some((item) => "gap" in item)).toBe(false);
    for (const item of resumed) if ("id" in item) expect(item.id).toBeGreaterThan(lastEventId);
    await replicas.b!.stopApi();
  });

  it("never shows a line twice across a takeover (SIGKILL of the owner): what cannot be had is a gap", async () => {
    const sessionId = await ticking(replicas.c!);
    expect(await ownerOf(sessionId)).toBe("replica-c");
    const terminal = replicas.a!.client.terminal(sessionId);
    const before = await readUntilTick(terminal, 5);
    await replicas.c!.stopSupervisor("SIGKILL");
    for await (const frame of terminal.frames()) before.push(frame);
    const stoppedAt = ticksOf(textOf(before)).at(-1)!;

    const lastSeq = Math.max(...seqsOf(before));
    const again = await reconnect(replicas.a!, sessionId, lastSeq);
    const after = await readUntilTick(again.terminal, stoppedAt + 30);
    again.terminal.close();
    expect(await ownerOf(sessionId)).toBe("replica-a");

    const ticks = ticksOf(textOf([...before, ...after]));
    // In order and never twice; a line missing is only allowed behind a gap.
    expect(ticks).toEqual([...new Set(ticks)].sort((x, y) => x - y));
    const contiguous = ticks.every((tick, index) => tick === index + 1);
    if (!contiguous) expect(gapsIn(after)).toBeGreaterThan(0);
    const seqs = [...seqsOf(before), ...seqsOf(after)];
    expect(seqs).toEqual([...seqs].sort((x, y) => x - y));
    expect(new Set(seqs).size).toBe(seqs.length);
    console.info(`takeover: ${ticks.length} lines shown, ${stoppedAt} before the kill, ${gapsIn(after)} gap(s), last tick ${ticks.at(-1)}`);
  });
});
