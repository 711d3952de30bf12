/**
 * The api process's side of the internal socket, spoken with undici. Any failure to reach
 * the supervisor becomes a SupervisorUnavailableError, which the handlers answer with 503;
 * a supervisor of another protocol version is refused the same way.
 */
import type { Readable, Duplex } from "node:stream";
import { Pool } from "undici";
import { INTERNAL_PROTOCOL_VERSION, IO_UPGRADE_PROTOCOL, PROTOCOL_HEADER, internalPaths } from "./protocol.ts";

export class SupervisorUnavailableError extends Error {
  override name = "SupervisorUnavailableError";
}

export type InternalAnswer = { status: number; body: unknown };

const CONNECT_TIMEOUT_MS = 2_000;
/** Covers the slowest relayed call (a workspace request the backend bounds at 30 s). */
const ANSWER_TIMEOUT_MS = 60_000;

export class SupervisorClient {
  /** JSON round trips: a bounded set of kept-alive connections. */
  readonly #calls: Pool;
  /**
   * Event streams and terminal upgrades: each holds its connection for as long as the client
   * watches, so these may never wait behind a connection limit (a thousand watched sessions
   * would otherwise starve every other call).
   */
  readonly #streams: Pool;

  constructor(readonly socketPath: string) {
    const common = { socketPath, connect: { timeout: CONNECT_TIMEOUT_MS }, headersTimeout: ANSWER_TIMEOUT_MS };
    this.#calls = new Pool("http://supervisor", { ...common, connections: 32 });
    // The supervisor's heartbeats keep streams moving; no body timeout.
    this.#streams = new Pool("http://supervisor", { ...common, connections: null, bodyTimeout: 0 });
  }

  /** A JSON round trip; the answer's status and body are relayed as they are. */
  async call(method: "GET" | "POST" | "PUT" | "DELETE", path: string, body?: unknown): Promise<InternalAnswer> {
    const response = await this.#request(method, path, body);
    const text = await response.body.text();
    return { status: response.statusCode, body: text === "" ? undefined : JSON.parse(text) };
  }

  /**
   * Opens a session's event stream. A 200 answer carries the SSE bytes as a stream; any
   * other answer (404) is returned as JSON.
   */
  async events(sessionId: string, afterId: number): Promise<{ status: 200; stream: Readable } | InternalAnswer> {
    const response = await this.#request("GET", `${internalPaths.events(sessionId)}?after=${afterId}`, undefined, this.#streams);
    if (response.statusCode !== 200) {
      return { status: response.statusCode, body: JSON.parse(await response.body.text()) };
    }
    return { status: 200, stream: response.body };
  }

  /** Upgrades to the framed terminal byte stream of one app (see io-frames.ts). */
  async openTerminal(sessionId: string, query: URLSearchParams): Promise<Duplex> {
    try {
      const { socket, headers } = await this.#streams.upgrade({
        path: `${internalPaths.io(sessionId)}?${query}`,
        protocol: IO_UPGRADE_PROTOCOL,
        headers: { [PROTOCOL_HEADER]: INTERNAL_PROTOCOL_VERSION },
      });
      if (headers[PROTOCOL_HEADER] !== INTERNAL_PROTOCOL_VERSION) {
        socket.destroy();
        throw new SupervisorUnavailableError(versionMismatchMessage(headers[PROTOCOL_HEADER]));
      }
      return socket;
    } catch (error) {
      throw asUnavailable(error);
    }
  }

  async close(): Promise<void> {
    await Promise.all([this.#calls.close(), this.#streams.close()]);
  }

  async #request(method: string, path: string, body?: unknown, pool: Pool = this.#calls) {
    // Serialised outside the try: a body that cannot be serialised is this request's fault,
    // not a sign that the supervisor is unavailable (issue 11, bug 4).
    const payload = body === undefined ? undefined : JSON.stringify(body);
    let response;
    try {
      response = await pool.request({
        method,
        path,
        headers: {
          [PROTOCOL_HEADER]: INTERNAL_PROTOCOL_VERSION,
          ...(payload !== undefined && { "content-type": "application/json" }),
        },
        ...(payload !== undefined && { body: payload }),
      });
    } catch (error) {
      throw asUnavailable(error);
    }
    const peerVersion = response.headers[PROTOCOL_HEADER];
    if (peerVersion !== INTERNAL_PROTOCOL_VERSION) {
      await response.body.dump();
      throw new SupervisorUnavailableError(versionMismatchMessage(peerVersion));
    }
    return response;
  }
}

function versionMismatchMessage(peerVersion: unknown): string {
  return `the supervisor speaks internal protocol '${String(peerVersion ?? "none")}' but this api process speaks '${INTERNAL_PROTOCOL_VERSION}'; run both processes from the same build`;
}

function asUnavailable(error: unknown): Error {
  if (error instanceof SupervisorUnavailableError) return error;
  return new SupervisorUnavailableError("the runner's supervisor process is not reachable", { cause: error });
}
