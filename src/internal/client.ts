/**
 * The api process's side of the internal socket, spoken with undici, calling the route
 * table's routes under `/internal`. Any failure to reach the supervisor becomes a
 * SupervisorUnavailableError, which the handlers answer with 503; a supervisor of another
 * protocol version is refused the same way. A refusal by the supervisor is raised as the
 * RunnerError the api relays unchanged.
 */
import type { Duplex, Readable } from "node:stream";
import { Pool } from "undici";
import { RunnerError, errorBodyOf } from "../contract/problem.ts";
import { INTERNAL_PREFIX, type RouteAnswer, type RouteSpec, TERMS_HEADER, pathOf, queryOf, routes } from "../contract/routes.ts";
import { requestIdHeaders } from "../observability/request-context.ts";
import { EVENTS_AFTER_QUERY, INTERNAL_PROTOCOL_VERSION, IO_UPGRADE_PROTOCOL, PROTOCOL_HEADER } from "./protocol.ts";

export class SupervisorUnavailableError extends Error {
  override name = "SupervisorUnavailableError";
}

/** One relayed call: the route's path parameters, pass-through query, body and terms header. */
export type InternalCall = {
  params?: Record<string, string>;
  query?: Record<string, string | undefined>;
  body?: unknown;
  acceptedTerms?: string | undefined;
};

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

  /** A JSON round trip of one route; a non-2xx answer is raised as a RunnerError. */
  async call<R extends RouteSpec>(route: R, call: InternalCall = {}): Promise<RouteAnswer<R>> {
    const path = pathOf(INTERNAL_PREFIX, route, call.params ?? {}) + queryOf(route, call.query ?? {});
    const headers: Record<string, string> = route.terms && call.acceptedTerms !== undefined ? { [TERMS_HEADER]: call.acceptedTerms } : {};
    const response = await this.#request(route.method, path, this.#calls, headers, call.body);
    const text = await response.body.text();
    if (response.statusCode >= 300) throw new RunnerError(response.statusCode, errorBodyOf(text));
    return (text === "" ? undefined : JSON.parse(text)) as RouteAnswer<R>;
  }

  /** Opens a session's event stream after `afterId`; a refusal (404) is raised as a RunnerError. */
  async events(sessionId: string, afterId: number): Promise<Readable> {
    const path = `${pathOf(INTERNAL_PREFIX, routes.sessionEvents, { id: sessionId })}?${EVENTS_AFTER_QUERY}=${afterId}`;
    const response = await this.#request("GET", path, this.#streams, {});
    if (response.statusCode !== 200) throw new RunnerError(response.statusCode, errorBodyOf(await response.body.text()));
    return response.body;
  }

  /** Upgrades to the framed terminal byte stream of one app (see io-frames.ts). */
  async openTerminal(sessionId: string, query: URLSearchParams): Promise<Duplex> {
    const passed = Object.fromEntries(routes.sessionIo.query.map((name) => [name, query.get(name) ?? undefined]));
    const path = pathOf(INTERNAL_PREFIX, routes.sessionIo, { id: sessionId }) + queryOf(routes.sessionIo, passed);
    try {
      const { socket, headers } = await this.#streams.upgrade({
        path,
        protocol: IO_UPGRADE_PROTOCOL,
        headers: { [PROTOCOL_HEADER]: INTERNAL_PROTOCOL_VERSION, ...requestIdHeaders() },
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

  async #request(method: string, path: string, pool: Pool, headers: Record<string, string>, body?: unknown) {
    // Serialised outside the try: a body that cannot be serialised is this request's fault,
    // not a sign that the supervisor is unavailable.
    const payload = body === undefined ? undefined : JSON.stringify(body);
    let response;
    try {
      response = await pool.request({
        method,
        path,
        headers: {
          [PROTOCOL_HEADER]: INTERNAL_PROTOCOL_VERSION,
          ...requestIdHeaders(),
          ...headers,
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
