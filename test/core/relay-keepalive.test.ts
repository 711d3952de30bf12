/**
 * HTTP/2 PING on the TCP peer link (docs/relay.md "Keepalive"), through a real supervisor: a
 * peer that stops answering without closing its connection (a host gone, a partition) is found
 * by an unanswered PING, its streams end so their clients come back, and the next call opens a
 * new connection; a peer that answers keeps an idle stream open however long it is quiet.
 */
import { type Server, type Socket, createServer, connect as netConnect } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { routes } from "../../src/contract/routes.ts";
import { SupervisorClient } from "../../src/internal/client.ts";
import { freePort } from "../support/ports.ts";
import { type RunnerUnderTest, startRunner } from "../support/processes.ts";
import { sessionBody } from "../support/session-body.ts";
import { eventsUntil, isStatus } from "../support/streams.ts";

const SECRET = "a-shared-peer-credential-of-40-characters";
const KEEPALIVE = { intervalMs: 200, timeoutMs: 600 };

/**
 * A TCP relay to `port` that can black-hole the connections it holds: from then on their bytes
 * go nowhere in either direction and neither side is closed, as when a peer's host vanishes.
 * Connections made afterwards are relayed again.
 */
async function blackHoleProxy(port: number): Promise<{ port: number; blackHole(): void; close(): Promise<void> }> {
  const held = new Set<{ silenced: boolean; sockets: Socket[] }>();
  const server: Server = createServer((downstream) => {
    const upstream = netConnect({ host: "127.0.0.1", port });
    const pair = { silenced: false, sockets: [downstream, upstream] };
    held.add(pair);
    downstream.on("data", (chunk) => pair.silenced || upstream.write(chunk));
    upstream.on("data", (chunk) => pair.silenced || downstream.write(chunk));
    for (const socket of pair.sockets) {
      socket.on("error", () => undefined);
      socket.on("close", () => {
        held.delete(pair);
        for (const other of pair.sockets) other.destroy();
      });
    }
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const address = server.address();
  if (address === null || typeof address === "string") throw new Error("proxy has no port");
  return {
    port: address.port,
    blackHole: () => {
      for (const pair of held) pair.silenced = true;
    },
    close: () => {
      for (const pair of held) for (const socket of pair.sockets) socket.destroy();
      return new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

describe("keepalive on the peer link", () => {
  let runner: RunnerUnderTest;
  let peerPort: number;
  beforeAll(async () => {
    peerPort = await freePort();
    runner = await startRunner({ env: { RUNNER_PEER_LISTEN: `127.0.0.1:${peerPort}`, RUNNER_PEER_SECRET: SECRET } });
  });
  afterAll(async () => {
    await runner.close();
  });

  it("ends the streams of a peer that stops answering, and the next call reconnects", async () => {
    const proxy = await blackHoleProxy(peerPort);
    const link = new SupervisorClient({ host: "127.0.0.1", port: proxy.port, credential: SECRET, keepalive: KEEPALIVE });
    const { sessionId } = await runner.client.createSession(sessionBody());
    try {
      await eventsUntil(runner.client, sessionId, isStatus("running"));
      const events = await link.events(sessionId, 0);
      events.resume();
      const ended = new Promise<number>((resolve) => events.once("close", () => resolve(performance.now())));

      // Answered PINGs keep a quiet stream open: several intervals pass and it is still there.
      const quiet = await Promise.race([ended.then(() => "closed"), new Promise((resolve) => setTimeout(() => resolve("open"), 5 * KEEPALIVE.intervalMs))]);
      expect(quiet).toBe("open");

      const silencedAt = performance.now();
      proxy.blackHole();
      const endedAt = await Promise.race([ended, new Promise<number>((_, reject) => setTimeout(() => reject(new Error("the stream outlived a silent peer")), 10_000))]);
      // Found by the PING, not by anything slower: within an interval and the timeout (and slack for a loaded machine).
      expect(endedAt - silencedAt).toBeLessThan(KEEPALIVE.intervalMs + KEEPALIVE.timeoutMs + 3_000);

      // A new connection, through the relay that forwards again.
      expect((await link.call(routes.getSession, { params: { id: sessionId } })).sessionId).toBe(sessionId);
    } finally {
      await link.close();
      await proxy.close();
      await runner.client.deleteSession(sessionId);
    }
  });
});
