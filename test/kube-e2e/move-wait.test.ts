/**
 * A session between replicas (its owner handing it over, its successor not serving it yet) is
 * waited for by the api a client reached, not refused: a browser's EventSource answered 503
 * closes for good (the Studio client then shows the session failed), and a terminal refused
 * backs off. Every pod write of the move is held by the simulated apiserver, so the session is
 * between owners for seconds after its terminal closes with 1012; a request, an event stream
 * and a terminal asked for at that moment through a third replica are served once the
 * successor has it.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type KubeRunner, SESSION_NAMESPACE, runningSession } from "../support/kube-runner.ts";
import { type ReplicaSet, startReplicaSet } from "../support/replica-set.ts";
import { framesToClose, framesUntilText } from "../support/streams.ts";

const START_MS = 20_000;
/** Each pod update of the move (the leaving owner's save of its ids, the successor's claim) takes this long. */
const WRITE_HELD_MS = 800;

describe("a session between replicas", () => {
  let set: ReplicaSet;
  let a: KubeRunner;
  let b: KubeRunner;
  let c: KubeRunner;

  beforeAll(async () => {
    set = await startReplicaSet(["a", "b", "c"], { shards: 4, leaseSeconds: 3, startMs: START_MS });
    a = set.replicas.a as KubeRunner;
    b = set.replicas.b as KubeRunner;
    c = set.replicas.c as KubeRunner;
  }, 4 * START_MS);
  afterAll(async () => {
    a?.sim.faults.clear();
    await set?.close();
  });

  it("is waited for: a call, an event stream and a terminal asked for during its handover are served by its successor", async () => {
    const sessionId = await runningSession(b);
    const held = b.client.terminal(sessionId);
    await held.send("before\r");
    await framesUntilText(held, "before");

    a.sim.faults.addLatency({ verb: "update", resource: "pods", namespace: SESSION_NAMESPACE, ms: WRITE_HELD_MS });
    const drained = framesToClose(held);
    const stopping = b.stopSupervisor("SIGTERM");
    await drained;
    expect((await held.closed).code).toBe(1012);

    // b is saving the session's ids now (a held write), and its successor will claim the pod with
    // another: neither serves the session for a while. Through c, which forwards to whoever has it:
    const events = new AbortController();
    const [document, stream, terminalFirst] = await Promise.all([
      fetch(`${c.baseUrl}/v1/sessions/${sessionId}`).then(async (response) => ({ status: response.status, body: (await response.json()) as { status?: { kind: string } } })),
      fetch(`${c.baseUrl}/v1/sessions/${sessionId}/events`, { headers: { accept: "text/event-stream" }, signal: events.signal }),
      (async () => {
        const terminal = c.client.terminal(sessionId);
        const first = await terminal.frames().next();
        return { terminal, first: first.done ? undefined : first.value };
      })(),
    ]);
    expect(document.status).toBe(200);
    expect(document.body.status?.kind).toBe("running");
    expect(stream.status).toBe(200);
    events.abort();
    expect(terminalFirst.first).toMatchObject({ kind: "control", message: { type: "seq" } });
    // The terminal is the successor's, live: what is typed now comes back.
    await terminalFirst.terminal.send("after\r");
    await framesUntilText(terminalFirst.terminal, "after");
    terminalFirst.terminal.close();

    await stopping;
    const owner = (await set.shardLeases()).map((lease) => lease?.holder);
    expect(owner).not.toContain("replica-b");
  });

  it("is waited for after its owner is killed: an event stream asked for at once is served when the lease lets another replica take it", async () => {
    a.sim.faults.clear();
    const sessionId = await runningSession(c);
    await c.stopSupervisor("SIGKILL");
    // c's shard Leases stay held until they expire: its peer link refuses, and a's api asks
    // again as the placement moves instead of answering 503 supervisor_unavailable.
    const stream = await fetch(`${a.baseUrl}/v1/sessions/${sessionId}/events`, { headers: { accept: "text/event-stream", "last-event-id": "1" } });
    expect(stream.status).toBe(200);
    const reader = stream.body!.getReader();
    const { value } = await reader.read();
    expect(Buffer.from(value ?? new Uint8Array()).toString()).toMatch(/^(id|event|data|:)/m);
    await reader.cancel();
  });
});
