/**
 * A terminal on a host's Hono server (the routes mounted elsewhere, upgraded by the host's
 * @hono/node-ws helper): there is no raw socket to splice, so the api relays message for
 * message between the client's WebSocket and a WebSocket client of its own to the supervisor,
 * on a connection to the supervisor's socket (or a peer's TCP address, with the credential).
 * The close codes are the splice's (terminal-splice.ts); backpressure is the same ceiling:
 * while the client has more than 1 MiB unsent, the supervisor's connection is not read.
 */
import { connect } from "node:net";
import { WebSocket } from "ws";
import { RunnerError, errorBodyOf, isSessionMoving } from "../contract/problem.ts";
import { SupervisorUnavailableError } from "./client.ts";
import { PEER_KEEPALIVE } from "./keepalive.ts";
import type { SupervisorTarget } from "./link.ts";
import { INTERNAL_PROTOCOL_VERSION, PEER_CREDENTIAL_HEADER, PROTOCOL_HEADER } from "./protocol.ts";
import { SESSION_MOVING, SUPERVISOR_GONE } from "./terminal-splice.ts";

const CLIENT_BUFFER_HIGH_WATER = 1024 * 1024;
/** What a client may send in one message; the supervisor enforces the same (1009 past it). */
const MAX_MESSAGE_BYTES = 1024 * 1024;

type RawSocket = { pause(): void; resume(): void; once(event: "drain", listener: () => void): unknown };

/** ws keeps its socket private; pausing it is how a relayed terminal holds the supervisor back. */
function socketOf(ws: WebSocket): RawSocket | undefined {
  return (ws as unknown as { _socket?: RawSocket })._socket;
}

/** A WebSocket client of the supervisor's terminal at `path`; a refused upgrade is raised as terminal-upgrade.ts raises it. */
export function connectTerminal(target: SupervisorTarget, path: string, headers: Record<string, string>, signal: AbortSignal): Promise<WebSocket> {
  return new Promise((resolve, reject) => {
    const createConnection = () => {
      if ("socketPath" in target) return connect(target.socketPath);
      const socket = connect({ host: target.host, port: target.port, noDelay: true });
      socket.setKeepAlive(true, (target.keepalive ?? PEER_KEEPALIVE).intervalMs);
      return socket;
    };
    const credential = "credential" in target ? { [PEER_CREDENTIAL_HEADER]: target.credential } : {};
    const ws = new WebSocket(`ws://supervisor${path}`, {
      createConnection,
      perMessageDeflate: false,
      maxPayload: MAX_MESSAGE_BYTES * 2,
      headers: { ...headers, ...credential, [PROTOCOL_HEADER]: INTERNAL_PROTOCOL_VERSION },
    });
    const gone = () => ws.terminate();
    signal.addEventListener("abort", gone, { once: true });
    ws.once("open", () => {
      signal.removeEventListener("abort", gone);
      resolve(ws);
    });
    ws.once("unexpected-response", (_request, response) => {
      let body = "";
      response.on("data", (chunk: Buffer) => (body += chunk.toString("utf8")));
      response.on("end", () => {
        ws.terminate();
        const error = new RunnerError(response.statusCode ?? 0, errorBodyOf(body));
        reject(isSessionMoving(error) ? error : new SupervisorUnavailableError(`the supervisor refused the terminal's upgrade with ${response.statusCode}`));
      });
    });
    ws.once("error", (error) => reject(new SupervisorUnavailableError("the runner's supervisor process is not reachable", { cause: error })));
  });
}

/**
 * Joins the client's WebSocket to the one `open` gives: messages both ways, the supervisor's
 * close code to the client, 1011 when the supervisor's connection breaks without one.
 */
export function relayTerminal(client: WebSocket, open: (clientGone: AbortSignal) => Promise<WebSocket>): void {
  // Until the supervisor's side is open the client is not read: its messages wait in TCP.
  client.pause();
  const left = new AbortController();
  client.once("close", () => left.abort());
  client.on("error", () => left.abort());
  open(left.signal).then(
    (supervisor) => {
      if (left.signal.aborted) return supervisor.terminate();
      join(client, supervisor);
      client.resume();
    },
    (error: unknown) => {
      const { code, reason } = isSessionMoving(error) ? SESSION_MOVING : SUPERVISOR_GONE;
      // Read again, so the client's answering close frame ends the socket at once.
      client.resume();
      client.close(code, reason);
    },
  );
}

function join(client: WebSocket, supervisor: WebSocket): void {
  client.on("message", (data: Buffer, isBinary: boolean) => supervisor.send(data, { binary: isBinary }));
  client.on("close", () => supervisor.close());
  supervisor.on("message", (data: Buffer, isBinary: boolean) => {
    client.send(data, { binary: isBinary });
    const upstream = socketOf(supervisor);
    if (client.bufferedAmount < CLIENT_BUFFER_HIGH_WATER || !upstream) return;
    upstream.pause();
    const resumeWhenDrained = () => {
      if (client.readyState !== client.OPEN) return;
      if (client.bufferedAmount < CLIENT_BUFFER_HIGH_WATER) upstream.resume();
      else socketOf(client)?.once("drain", resumeWhenDrained);
    };
    socketOf(client)?.once("drain", resumeWhenDrained);
  });
  supervisor.on("error", () => undefined);
  // A close frame from the supervisor is passed on; a connection that broke without one (1006) is the supervisor gone.
  supervisor.on("close", (code: number, reason: Buffer) => {
    if (client.readyState !== client.OPEN) return;
    if (code === 1006 || code === 1005) client.close(SUPERVISOR_GONE.code, SUPERVISOR_GONE.reason);
    else client.close(code, reason.toString("utf8"));
  });
}
