/**
 * The supervisor's side of a handed terminal (src/supervisor/terminal-handoffs.ts) through the
 * real upgrade handler and HTTP/1.1 server, on a real TCP connection whose server end is handed
 * over as the api hands it (its handle taken out of the wrapper): a session this replica does not
 * serve gives the socket back, intact and unwritten, with the refusal; one it serves is upgraded
 * on the client's own connection and reported taken; a client gone before the answer is reported
 * closed. Only the channel is this test's (its own end-to-end test: test/kube-e2e/terminal-handoff.test.ts).
 */
import { type Server as HttpServer, createServer as createHttpServer } from "node:http";
import { type AddressInfo, type Server, type Socket, connect, createServer } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { HandleChannel, SocketHandle } from "../../src/internal/handle-channel.ts";
import { type HandoffMessage, adoptHandle, detachHandle } from "../../src/internal/terminal-handoff.ts";
import { requestHead } from "../../src/internal/terminal-upgrade.ts";
import { createLogger } from "../../src/log.ts";
import { TerminalHandoffs } from "../../src/supervisor/terminal-handoffs.ts";
import { terminalUpgrades } from "../../src/supervisor/terminal-upgrades.ts";
import type { SessionService } from "../../src/supervisor/session-service.ts";
import { waitFor } from "../support/wait.ts";

const KEY = "dGhlIHNhbXBsZSBub25jZQ==";
const log = createLogger("supervisor", "silent");

/** A channel that records what the supervisor answers. */
function recordingChannel(): HandleChannel & { sent: { message: HandoffMessage; handle: SocketHandle | undefined }[] } {
  const sent: { message: HandoffMessage; handle: SocketHandle | undefined }[] = [];
  return { sent, send: async (message, handle) => void sent.push({ message: message as HandoffMessage, handle }), gone: new Promise(() => undefined), close: () => undefined };
}

let listener: Server;
let accepted: Socket[] = [];
beforeAll(async () => {
  listener = createServer({ pauseOnConnect: true }, (socket) => accepted.push(socket));
  await new Promise<void>((resolve) => listener.listen(0, "127.0.0.1", resolve));
});
afterAll(() => new Promise<void>((resolve) => listener.close(() => resolve())));

/** A client connected to the listener, and the server end's handle taken out as the api takes it. */
async function handedConnection(): Promise<{ client: Socket; received: () => string; handle: SocketHandle }> {
  accepted = [];
  const client = connect((listener.address() as AddressInfo).port, "127.0.0.1");
  let received = "";
  client.on("data", (chunk: Buffer) => (received += chunk.toString("latin1")));
  await waitFor("the connection accepted", () => accepted.length === 1);
  const detached = detachHandle(accepted[0]!);
  return { client, received: () => received, handle: detached!.handle };
}

/** The supervisor's upgrade handler over its own HTTP/1.1 server, for a service that serves or refuses every session. */
function supervisorSide(servedElsewhere: boolean): { handoffs: TerminalHandoffs; http1: HttpServer } {
  const service = { servedElsewhere: () => servedElsewhere, registry: { get: () => undefined } } as unknown as SessionService;
  const handoffs = new TerminalHandoffs(log);
  const http1 = createHttpServer();
  http1.on("upgrade", terminalUpgrades(service, log, handoffs).handler());
  handoffs.readFrom(http1);
  return { handoffs, http1 };
}

const upgradeRequest = (sessionId: string) =>
  requestHead({ socketPath: "unused" }, `/internal/sessions/${sessionId}/io`, { "sec-websocket-key": KEY, "sec-websocket-version": "13" }).toString("base64");

describe("a terminal handed to the supervisor", () => {
  it("comes back to the api with the refusal, unwritten, when the session is served elsewhere", async () => {
    const { handoffs } = supervisorSide(true);
    const { client, received, handle } = await handedConnection();
    const channel = recordingChannel();
    handoffs.receive({ kind: "terminal", ticket: 7, request: upgradeRequest("s-1") }, handle, channel);
    await waitFor("the answer", () => channel.sent.length === 1);
    const [{ message, handle: returned }] = channel.sent as [{ message: HandoffMessage; handle: SocketHandle }];
    expect(message).toMatchObject({ kind: "refused", ticket: 7, status: 503, rest: "" });
    expect(JSON.parse((message as Extract<HandoffMessage, { kind: "refused" }>).body)).toMatchObject({ error: "session_moving" });
    expect(received()).toBe("");
    // The socket came back whole: what the api writes on it reaches the client, and the reverse.
    const back = adoptHandle(returned);
    back.write("from the api");
    await waitFor("the api's bytes at the client", () => received() === "from the api");
    let seen = "";
    back.on("data", (chunk: Buffer) => (seen += chunk.toString()));
    back.resume();
    client.write("from the client");
    await waitFor("the client's bytes at the api", () => seen === "from the client");
    back.destroy();
    client.destroy();
  });

  it("is upgraded on the client's own connection and reported taken when the session is served here", async () => {
    const { handoffs } = supervisorSide(false);
    const { client, received, handle } = await handedConnection();
    const channel = recordingChannel();
    handoffs.receive({ kind: "terminal", ticket: 8, request: upgradeRequest("s-2") }, handle, channel);
    await waitFor("the answer", () => channel.sent.length === 1);
    expect(channel.sent[0]).toEqual({ message: { kind: "taken", ticket: 8 }, handle: undefined });
    // The 101, then the supervisor's own close for a session it does not know (4404), on the client's connection.
    await waitFor("the handshake and the close", () => received().includes("session not found"));
    expect(received()).toMatch(/^HTTP\/1\.1 101 Switching Protocols\r\n/);
    client.destroy();
  });

  it("is reported closed when the client went before it was answered", async () => {
    const { handoffs } = supervisorSide(false);
    const { client, handle } = await handedConnection();
    const channel = recordingChannel();
    client.destroy();
    // Half a request: the supervisor waits for the rest, and meets the client's end instead.
    const half = Buffer.from(upgradeRequest("s-3"), "base64").subarray(0, 20).toString("base64");
    handoffs.receive({ kind: "terminal", ticket: 9, request: half }, handle, channel);
    await waitFor("the answer", () => channel.sent.length === 1);
    expect(channel.sent[0]!.message).toEqual({ kind: "closed", ticket: 9 });
  });
});
