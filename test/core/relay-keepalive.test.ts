/**
 * HTTP/2 PING on the TCP peer link (docs/relay.md "Keepalive"), through real sockets: a peer
 * that stops answering without closing its connection (a host gone, a partition) is found by an
 * unanswered PING. On the api's side (a real supervisor) its streams end so their clients come
 * back and the next call opens a new connection, while a peer that answers keeps an idle stream
 * open; on the peer listener's side the silent api's connection is dropped, and a spliced
 * terminal (pinged by the supervisor, docs/relay.md) is cut.
 */
import { mkdtemp, rm } from "node:fs/promises";
import { type Server, type Socket, createServer, connect as netConnect } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { WebSocket } from "ws";
import { INTERNAL_PREFIX, pathOf, routes } from "../../src/contract/routes.ts";
import { PEER_KEEPALIVE } from "../../src/internal/keepalive.ts";
import { INTERNAL_PROTOCOL_VERSION, PEER_CREDENTIAL_HEADER, PROTOCOL_HEADER } from "../../src/internal/protocol.ts";
import { SupervisorClient } from "../../src/internal/client.ts";
import { createLogger } from "../../src/log.ts";
import { startInternalServer } from "../../src/supervisor/internal-server.ts";
import type { SessionService } from "../../src/supervisor/session-service.ts";
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
type Proxy = {
  port: number;
  blackHole(): void;
  /** Which end closed a relayed connection first: the caller's, or the one it relays to. */
  firstClose: Promise<"downstream" | "upstream">;
  close(): Promise<void>;
};

async function blackHoleProxy(port: number): Promise<Proxy> {
  const held = new Set<{ silenced: boolean; sockets: Socket[] }>();
  let closedFirst!: (side: "downstream" | "upstream") => void;
  const firstClose = new Promise<"downstream" | "upstream">((resolve) => (closedFirst = resolve));
  const server: Server = createServer((downstream) => {
    const upstream = netConnect({ host: "127.0.0.1", port });
    const pair = { silenced: false, sockets: [downstream, upstream] };
    held.add(pair);
    downstream.on("data", (chunk) => pair.silenced || upstream.write(chunk));
    upstream.on("data", (chunk) => pair.silenced || downstream.write(chunk));
    downstream.once("close", () => closedFirst("downstream"));
    upstream.once("close", () => closedFirst("upstream"));
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
    firstClose,
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
  it("cuts a spliced terminal whose peer api stops answering its pings", async () => {
    const proxy = await blackHoleProxy(peerPort);
    const { sessionId } = await runner.client.createSession(sessionBody());
    try {
      await eventsUntil(runner.client, sessionId, isStatus("running"));
      // The terminal as a peer's api opens it: straight to the supervisor's peer listener.
      const terminal = new WebSocket(`ws://127.0.0.1:${proxy.port}${pathOf(INTERNAL_PREFIX, routes.sessionIo, { id: sessionId })}`, {
        headers: { [PEER_CREDENTIAL_HEADER]: SECRET, [PROTOCOL_HEADER]: INTERNAL_PROTOCOL_VERSION },
        perMessageDeflate: false,
      });
      terminal.on("error", () => undefined);
      await new Promise((resolve, reject) => terminal.once("open", resolve).once("unexpected-response", reject));
      const silencedAt = performance.now();
      proxy.blackHole();
      // Pinged every interval (PEER_KEEPALIVE, 10 s): the pong the black hole swallows is missed at the next.
      const side = await Promise.race([proxy.firstClose, new Promise<never>((_, reject) => setTimeout(() => reject(new Error("the supervisor kept a silent peer's terminal")), 3 * PEER_KEEPALIVE.intervalMs))]);
      expect(side).toBe("upstream");
      expect(performance.now() - silencedAt).toBeLessThan(2 * PEER_KEEPALIVE.intervalMs + 3_000);
      terminal.terminate();
    } finally {
      await proxy.close();
      await runner.client.deleteSession(sessionId);
    }
  }, 60_000);
});

describe("keepalive on the peer listener", () => {
  it("drops the connection of a peer api that stops answering", async () => {
    const port = await freePort();
    const dir = await mkdtemp(join(tmpdir(), "k8s-runner-keepalive-"));
    // Only the capabilities route is asked for; the rest of the service is never reached.
    const service = { watch: {}, capabilities: () => ({ ok: true }) } as unknown as SessionService;
    const server = await startInternalServer({
      socketPath: join(dir, "supervisor.sock"),
      peer: { listen: { host: "127.0.0.1", port }, secret: SECRET, keepalive: KEEPALIVE },
      service,
      handoff: false,
      log: createLogger("supervisor", "silent"),
    });
    const proxy = await blackHoleProxy(port);
    // This side does not PING within the test, so only the listener's PING can find the silence.
    const link = new SupervisorClient({ host: "127.0.0.1", port: proxy.port, credential: SECRET, keepalive: { intervalMs: 60_000, timeoutMs: 60_000 } });
    try {
      expect(await link.call(routes.capabilities)).toEqual({ ok: true });
      const silencedAt = performance.now();
      proxy.blackHole();
      const side = await Promise.race([proxy.firstClose, new Promise<never>((_, reject) => setTimeout(() => reject(new Error("the listener kept a silent peer")), 10_000))]);
      expect(side).toBe("upstream");
      expect(performance.now() - silencedAt).toBeLessThan(KEEPALIVE.intervalMs + KEEPALIVE.timeoutMs + 3_000);
    } finally {
      await link.close();
      await proxy.close();
      await server.close();
      await rm(dir, { recursive: true, force: true });
    }
  });
});
