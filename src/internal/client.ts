/**
 * The api process's side of the internal protocol: the route table's routes under `/internal`,
 * each call and event stream a stream of one HTTP/2 connection (link.ts). Any failure
 * to reach the supervisor becomes a SupervisorUnavailableError, which the handlers answer with
 * 503; a supervisor of another protocol version is refused the same way. A refusal by the
 * supervisor is raised as the RunnerError the api relays unchanged.
 */
import type { ClientHttp2Stream, IncomingHttpHeaders } from "node:http2";
import { RunnerError, errorBodyOf } from "../contract/problem.ts";
import { INTERNAL_PREFIX, type RouteAnswer, type RouteSpec, TERMS_HEADER, pathOf, queryOf, routes } from "../contract/routes.ts";
import { requestIdHeaders } from "../observability/request-context.ts";
import { SpanKind, inStepSpan, traceHeaders } from "../observability/tracing.ts";
import { LinkError, type LinkResponse, SupervisorLink, type SupervisorTarget } from "./link.ts";
import { EVENTS_AFTER_QUERY, INTERNAL_PROTOCOL_VERSION, PROTOCOL_HEADER } from "./protocol.ts";

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

/** Covers the slowest relayed call (a workspace request the backend bounds at 30 s). */
const ANSWER_TIMEOUT_MS = 60_000;

export class SupervisorClient {
  readonly #link: SupervisorLink;
  /** Where the link goes, on each call's span: the Unix socket, or a peer replica's address. */
  readonly #spanAttributes: Record<string, string | number>;

  /** A socket path (the local supervisor) or a target (a peer replica's, over TCP). */
  constructor(target: string | SupervisorTarget) {
    this.#link = new SupervisorLink(typeof target === "string" ? { socketPath: target } : target);
    this.#spanAttributes =
      typeof target === "string" || "socketPath" in target
        ? { "k8s_runner.link": "unix" }
        : { "k8s_runner.link": "peer", "server.address": target.host, "server.port": target.port };
  }

  /**
   * A JSON round trip of one route; a non-2xx answer is raised as a RunnerError. Inside a traced
   * request, a client span whose context the supervisor continues (docs/tracing.md).
   */
  call<R extends RouteSpec>(route: R, call: InternalCall = {}): Promise<RouteAnswer<R>> {
    const name = `${route.method} ${INTERNAL_PREFIX}${route.path}`;
    return inStepSpan(name, SpanKind.CLIENT, this.#spanAttributes, () => this.#call(route, call));
  }

  async #call<R extends RouteSpec>(route: R, call: InternalCall): Promise<RouteAnswer<R>> {
    const path = pathOf(INTERNAL_PREFIX, route, call.params ?? {}) + queryOf(route, call.query ?? {});
    const headers: Record<string, string> = route.terms && call.acceptedTerms !== undefined ? { [TERMS_HEADER]: call.acceptedTerms } : {};
    // Serialised before the stream opens: a body that cannot be serialised is this request's
    // fault, not a sign that the supervisor is unavailable.
    const payload = call.body === undefined ? undefined : JSON.stringify(call.body);
    const response = await this.#open(route.method, path, headers, payload);
    response.stream.setTimeout(ANSWER_TIMEOUT_MS, () => response.stream.destroy(new LinkError("the supervisor did not answer in time")));
    const text = await readText(response.stream).catch((error: unknown) => {
      throw asUnavailable(error);
    });
    if (response.status >= 300) throw new RunnerError(response.status, errorBodyOf(text));
    return (text === "" ? undefined : JSON.parse(text)) as RouteAnswer<R>;
  }

  /** Opens a session's event stream after `afterId`; a refusal (404) is raised as a RunnerError. */
  async events(sessionId: string, afterId: number): Promise<ClientHttp2Stream> {
    const path = `${pathOf(INTERNAL_PREFIX, routes.sessionEvents, { id: sessionId })}?${EVENTS_AFTER_QUERY}=${afterId}`;
    const response = await this.#open("GET", path, {});
    if (response.status !== 200) throw new RunnerError(response.status, errorBodyOf(await readText(response.stream).catch(() => "")));
    return response.stream;
  }

  /** Where this supervisor is: a terminal opens a connection of its own there (terminal-upgrade.ts). */
  get target(): SupervisorTarget {
    return this.#link.target;
  }

  close(): Promise<void> {
    return this.#link.close();
  }

  async #open(method: string, path: string, headers: Record<string, string>, body?: string): Promise<LinkResponse> {
    let response: LinkResponse;
    try {
      response = await this.#link.open(
        {
          ":method": method,
          ":path": path,
          ...requestIdHeaders(),
          ...traceHeaders(),
          ...headers,
          ...(body !== undefined && { "content-type": "application/json" }),
        },
        body !== undefined ? { body } : {},
      );
    } catch (error) {
      throw asUnavailable(error);
    }
    checkVersion(response.status, response.headers, response.stream);
    return response;
  }
}

function checkVersion(status: number, headers: IncomingHttpHeaders, stream: ClientHttp2Stream): void {
  const peerVersion = headers[PROTOCOL_HEADER];
  if (peerVersion === INTERNAL_PROTOCOL_VERSION) return;
  stream.destroy();
  if (status === 401) throw new SupervisorUnavailableError("the peer supervisor refused this replica's credential; give every replica the same RUNNER_PEER_SECRET");
  throw new SupervisorUnavailableError(
    `the supervisor speaks internal protocol '${String(peerVersion ?? "none")}' but this api process speaks '${INTERNAL_PROTOCOL_VERSION}'; run both processes from the same build`,
  );
}

function readText(stream: ClientHttp2Stream): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    stream.on("data", (chunk: Buffer) => chunks.push(chunk));
    stream.once("end", () => resolve(Buffer.concat(chunks).toString("utf8")));
    stream.once("error", reject);
    stream.once("close", () => reject(new LinkError("the answer was cut off")));
  });
}

function asUnavailable(error: unknown): Error {
  if (error instanceof SupervisorUnavailableError) return error;
  return new SupervisorUnavailableError("the runner's supervisor process is not reachable", { cause: error });
}
