/**
 * A terminal's own connection to its supervisor (docs/relay.md "The terminal"): the api opens
 * it to the supervisor's Unix socket (or a peer's TCP address, with the shared credential) and
 * makes the client's WebSocket upgrade again on it. Once the supervisor answers 101, the
 * connection carries the client's WebSocket as it is and the api splices the two
 * (terminal-splice.ts). Any other answer is raised: `503 session_moving` as the RunnerError the
 * session router waits out, anything else, and no connection at all, as
 * SupervisorUnavailableError.
 */
import { type Socket, connect } from "node:net";
import { RunnerError, errorBodyOf, isSessionMoving } from "../contract/problem.ts";
import { SupervisorUnavailableError } from "./client.ts";
import { type Keepalive, PEER_KEEPALIVE } from "./keepalive.ts";
import type { SupervisorTarget } from "./link.ts";
import { INTERNAL_PROTOCOL_VERSION, PEER_CREDENTIAL_HEADER, PROTOCOL_HEADER } from "./protocol.ts";

/**
 * The supervisor's 101 as it sent it (passed on to the client unchanged) and what followed it in
 * the same read; `keepalive`: a peer's (over TCP), whose silence the splice watches.
 */
export type UpgradedTerminal = { socket: Socket; head: Buffer; rest: Buffer; keepalive?: Keepalive };

const HEAD_END = Buffer.from("\r\n\r\n");
/** An answer's head past this is not our supervisor's. */
const MAX_HEAD_BYTES = 16 * 1024;
const MAX_BODY_BYTES = 64 * 1024;
/** The supervisor answers an upgrade at once; this bounds a connection that opened and then hung. */
const ANSWER_TIMEOUT_MS = 10_000;

function connectTo(target: SupervisorTarget): Socket {
  if ("socketPath" in target) return connect(target.socketPath);
  // No Nagle: a keystroke must not wait for the previous segment's acknowledgement. TCP
  // keepalive besides the supervisor's pings (terminal-splice.ts watches for them).
  const socket = connect({ host: target.host, port: target.port, noDelay: true });
  socket.setKeepAlive(true, (target.keepalive ?? PEER_KEEPALIVE).intervalMs);
  return socket;
}

/** The request's head; a header value holding a line break (which node's parser refuses anyway) is left out. */
export function requestHead(target: SupervisorTarget, path: string, headers: Record<string, string | undefined>): Buffer {
  const all: Record<string, string | undefined> = {
    host: "supervisor",
    connection: "Upgrade",
    upgrade: "websocket",
    ...headers,
    [PROTOCOL_HEADER]: INTERNAL_PROTOCOL_VERSION,
    ...("credential" in target && { [PEER_CREDENTIAL_HEADER]: target.credential }),
  };
  const lines = [`GET ${path} HTTP/1.1`];
  for (const [name, value] of Object.entries(all)) if (value !== undefined && !/[\r\n]/.test(value)) lines.push(`${name}: ${value}`);
  lines.push("", "");
  return Buffer.from(lines.join("\r\n"), "latin1");
}

/** The status and lower-cased headers of an answer's head. */
function parseHead(head: Buffer): { status: number; headers: Map<string, string> } {
  const [statusLine = "", ...lines] = head.toString("latin1").split("\r\n");
  const status = Number(/^HTTP\/1\.[01] (\d{3})/.exec(statusLine)?.[1] ?? 0);
  const headers = new Map<string, string>();
  for (const line of lines) {
    const colon = line.indexOf(":");
    if (colon > 0) headers.set(line.slice(0, colon).trim().toLowerCase(), line.slice(colon + 1).trim());
  }
  return { status, headers };
}

/** The refusal an answer other than 101 stands for. */
export function refusal(status: number, body: string): Error {
  const error = new RunnerError(status, errorBodyOf(body));
  if (isSessionMoving(error)) return error;
  return new SupervisorUnavailableError(`the supervisor refused the terminal's upgrade with ${status}: ${body.slice(0, 200)}`);
}

/**
 * Opens the terminal at `path` (the internal route with its query) on `target`, upgraded with
 * the client's WebSocket `headers`; `signal`: the client went away meanwhile.
 */
export function openTerminalUpgrade(target: SupervisorTarget, path: string, headers: Record<string, string | undefined>, signal?: AbortSignal): Promise<UpgradedTerminal> {
  return new Promise((resolve, reject) => {
    const socket = connectTo(target);
    let received: Buffer = Buffer.alloc(0);
    let answered: { status: number; headEnd: number; bodyBytes: number } | undefined;
    const fail = (error: Error) => {
      cleanup();
      socket.destroy();
      reject(error);
    };
    const unavailable = (error?: unknown) => fail(new SupervisorUnavailableError("the runner's supervisor process is not reachable", { cause: error }));
    const onData = (chunk: Buffer) => {
      received = received.byteLength === 0 ? chunk : Buffer.concat([received, chunk]);
      if (!answered) {
        const end = received.indexOf(HEAD_END);
        if (end < 0) return received.byteLength > MAX_HEAD_BYTES ? unavailable(new Error("an answer head too large")) : undefined;
        const { status, headers: answer } = parseHead(received.subarray(0, end));
        answered = { status, headEnd: end + HEAD_END.byteLength, bodyBytes: Math.min(Number(answer.get("content-length") ?? MAX_BODY_BYTES), MAX_BODY_BYTES) };
        if (status === 101) {
          cleanup();
          // Nothing more is read until the splice takes the socket.
          socket.pause();
          const upgraded = { socket, head: received.subarray(0, answered.headEnd), rest: received.subarray(answered.headEnd) };
          return resolve("socketPath" in target ? upgraded : { ...upgraded, keepalive: target.keepalive ?? PEER_KEEPALIVE });
        }
      }
      if (received.byteLength - answered.headEnd >= answered.bodyBytes) fail(refusal(answered.status, received.subarray(answered.headEnd).toString("utf8")));
    };
    const onEnd = () => (answered ? fail(refusal(answered.status, received.subarray(answered.headEnd).toString("utf8"))) : unavailable(new Error("closed before answering")));
    const onAbort = () => unavailable(new Error("the client went away"));
    const timer = setTimeout(() => unavailable(new Error(`no answer within ${ANSWER_TIMEOUT_MS} ms`)), ANSWER_TIMEOUT_MS);
    const cleanup = () => {
      clearTimeout(timer);
      socket.off("data", onData);
      socket.off("end", onEnd);
      socket.off("error", unavailable);
      socket.off("close", onEnd);
      signal?.removeEventListener("abort", onAbort);
    };
    if (signal?.aborted) return onAbort();
    signal?.addEventListener("abort", onAbort, { once: true });
    socket.on("data", onData);
    socket.once("end", onEnd);
    socket.once("close", onEnd);
    socket.once("error", unavailable);
    socket.write(requestHead(target, path, headers));
  });
}
