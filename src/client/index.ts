/**
 * A typed client of the `/v1` contract, for scripts and tests: JSON calls, the event stream
 * as an async iterator (reconnecting with Last-Event-ID), and the terminal WebSocket with its
 * binary framing.
 */
import { fetch, WebSocket } from "undici";
import { RunnerError, errorBodyOf } from "../contract/problem.ts";
import {
  type RouteAnswer,
  type RouteBodyInput,
  type RouteSpec,
  type Routes,
  TERMS_HEADER,
  V1_PREFIX,
  pathOf,
  queryOf,
  routes,
} from "../contract/routes.ts";
import { SseParser } from "../contract/sse.ts";
import { decodeByteFrame } from "../contract/streams.ts";
import type { ByteStreamTag, ProbeConfig, RunEvent } from "../contract/wire.ts";

export { RunnerError };

/** One event from the stream: a RunEvent with its id, or a gap marker. */
export type StreamItem = { id: number; event: RunEvent } | { gap: true };

export type TerminalFrame =
  | { kind: "bytes"; seq: number; tag: ByteStreamTag; payload: Uint8Array }
  | { kind: "control"; message: { type: string; [key: string]: unknown } };

export type RunnerClientOptions = {
  /** Sent in the terms header (`TERMS_HEADER`) on session creation. */
  acceptedTerms?: string;
  /** Extra headers on every HTTP request (e.g. Origin). */
  headers?: Record<string, string>;
};

/** One call: path parameters, pass-through query and the body, as the route table names them. */
type Call = { params?: Record<string, string>; query?: Record<string, string | undefined>; body?: unknown };

export class RunnerClient {
  readonly baseUrl: string;

  constructor(
    baseUrl: string,
    readonly options: RunnerClientOptions = {},
  ) {
    this.baseUrl = baseUrl.replace(/\/+$/, "");
  }

  health(): Promise<RouteAnswer<Routes["health"]>> {
    return this.#call(routes.health);
  }

  capabilities(): Promise<RouteAnswer<Routes["capabilities"]>> {
    return this.#call(routes.capabilities);
  }

  probe(config: ProbeConfig): Promise<RouteAnswer<Routes["probe"]>> {
    return this.#call(routes.probe, { body: { config } });
  }

  createSession(body: RouteBodyInput<Routes["createSession"]>): Promise<RouteAnswer<Routes["createSession"]>> {
    return this.#call(routes.createSession, { body });
  }

  createAppSession(name: string, body: RouteBodyInput<Routes["createAppSession"]> = {}): Promise<RouteAnswer<Routes["createAppSession"]>> {
    return this.#call(routes.createAppSession, { params: { name }, body });
  }

  getSession(id: string): Promise<RouteAnswer<Routes["getSession"]>> {
    return this.#call(routes.getSession, { params: { id } });
  }

  deleteSession(id: string): Promise<void> {
    return this.#call(routes.deleteSession, { params: { id } });
  }

  workspaceTree(id: string): Promise<RouteAnswer<Routes["workspaceTree"]>> {
    return this.#call(routes.workspaceTree, { params: { id } });
  }

  applyWorkspace(id: string, changes: RouteBodyInput<Routes["workspaceApply"]>): Promise<RouteAnswer<Routes["workspaceApply"]>> {
    return this.#call(routes.workspaceApply, { params: { id }, body: changes });
  }

  workspaceFile(id: string, path: string): Promise<RouteAnswer<Routes["workspaceFile"]>> {
    return this.#call(routes.workspaceFile, { params: { id }, query: { path } });
  }

  reload(id: string, app?: string): Promise<RouteAnswer<Routes["reload"]>> {
    return this.#call(routes.reload, { params: { id }, query: { app } });
  }

  setApps(id: string, body: RouteBodyInput<Routes["setApps"]>): Promise<RouteAnswer<Routes["setApps"]>> {
    return this.#call(routes.setApps, { params: { id }, body });
  }

  resume(id: string): Promise<RouteAnswer<Routes["resume"]>> {
    return this.#call(routes.resume, { params: { id } });
  }

  /**
   * The session's events, from `lastEventId` on. The stream ends after a terminal status;
   * a dropped connection or a 5xx answer is retried with Last-Event-ID (`reconnect`, on by
   * default), so no event is seen twice. Throws RunnerError for a session that is gone (404).
   */
  async *events(
    id: string,
    options: { lastEventId?: number; reconnect?: boolean; signal?: AbortSignal; maxReconnectDelayMs?: number } = {},
  ): AsyncGenerator<StreamItem> {
    let lastId = options.lastEventId ?? 0;
    let delay = 250;
    for (;;) {
      let ended = false;
      try {
        const response = await fetch(this.baseUrl + pathOf(V1_PREFIX, routes.sessionEvents, { id }), {
          headers: { ...this.options.headers, accept: "text/event-stream", ...(lastId > 0 && { "last-event-id": String(lastId) }) },
          ...(options.signal && { signal: options.signal }),
        });
        if (!response.ok) throw new RunnerError(response.status, errorBodyOf(await response.text()));
        const parser = new SseParser();
        const decoder = new TextDecoder();
        for await (const chunk of response.body as AsyncIterable<Uint8Array>) {
          for (const message of parser.push(decoder.decode(chunk, { stream: true }))) {
            if (message.event === "gap") {
              yield { gap: true };
              continue;
            }
            const event = JSON.parse(message.data) as RunEvent;
            const id = message.id === undefined ? 0 : Number(message.id);
            if (message.id !== undefined) lastId = id;
            yield { id, event };
            if (event.type === "status" && ["exited", "failed", "stopped"].includes(event.status.kind)) ended = true;
          }
        }
        delay = 250;
      } catch (error) {
        // A 5xx (the runner restarting) is worth waiting out; any other refusal is final.
        const final = error instanceof RunnerError && error.status < 500;
        if (final || options.signal?.aborted || options.reconnect === false) throw error;
      }
      if (ended || options.reconnect === false) return;
      await new Promise((resolve) => setTimeout(resolve, delay));
      delay = Math.min(delay * 2, options.maxReconnectDelayMs ?? 10_000);
    }
  }

  /** Opens the terminal WebSocket of a session (one app of it). */
  terminal(id: string, options: { app?: string; lastSeq?: number; origin?: string } = {}): Terminal {
    const url = new URL(this.baseUrl + pathOf(V1_PREFIX, routes.sessionIo, { id }));
    url.protocol = url.protocol === "https:" ? "wss:" : "ws:";
    if (options.app !== undefined) url.searchParams.set("app", options.app);
    if (options.lastSeq !== undefined) url.searchParams.set("lastSeq", String(options.lastSeq));
    const headers = options.origin !== undefined ? { origin: options.origin } : undefined;
    return new Terminal(new WebSocket(url, headers ? { headers } : undefined));
  }

  #termsHeader(): Record<string, string> {
    return this.options.acceptedTerms !== undefined ? { [TERMS_HEADER]: this.options.acceptedTerms } : {};
  }

  async #call<R extends RouteSpec>(route: R, call: Call = {}): Promise<RouteAnswer<R>> {
    const { body } = call;
    const headers = route.terms ? this.#termsHeader() : {};
    const path = pathOf(V1_PREFIX, route, call.params ?? {}) + queryOf(route, call.query ?? {});
    const response = await fetch(this.baseUrl + path, {
      method: route.method,
      headers: { ...this.options.headers, ...headers, ...(body !== undefined && { "content-type": "application/json" }) },
      ...(body !== undefined && { body: JSON.stringify(body) }),
    });
    const text = await response.text();
    if (!response.ok) throw new RunnerError(response.status, errorBodyOf(text));
    return (text === "" ? undefined : JSON.parse(text)) as RouteAnswer<R>;
  }
}

/**
 * The terminal WebSocket: frames as an async iterator, stdin and resize, and the close.
 * Frames that arrive before anyone iterates are kept (the iterator sees every frame).
 */
export class Terminal {
  readonly closed: Promise<{ code: number; reason: string }>;
  readonly opened: Promise<void>;
  readonly #frames: TerminalFrame[] = [];
  #wake: (() => void) | undefined;
  #isClosed = false;

  constructor(readonly socket: WebSocket) {
    socket.binaryType = "arraybuffer";
    this.opened = new Promise((resolve, reject) => {
      socket.addEventListener("open", () => resolve());
      socket.addEventListener("error", () => reject(new Error("terminal socket failed to open")));
    });
    this.opened.catch(() => undefined);
    this.closed = new Promise((resolve) => {
      socket.addEventListener("close", (event) => {
        this.#isClosed = true;
        this.#wake?.();
        resolve({ code: event.code, reason: event.reason });
      });
    });
    socket.addEventListener("message", (event) => {
      if (typeof event.data === "string") {
        this.#frames.push({ kind: "control", message: JSON.parse(event.data) as { type: string } });
      } else {
        const decoded = decodeByteFrame(new Uint8Array(event.data as ArrayBuffer));
        if (decoded) this.#frames.push({ kind: "bytes", ...decoded });
      }
      this.#wake?.();
    });
  }

  async *frames(): AsyncGenerator<TerminalFrame> {
    for (;;) {
      const frame = this.#frames.shift();
      if (frame) {
        yield frame;
        continue;
      }
      if (this.#isClosed) return;
      await new Promise<void>((resolve) => (this.#wake = resolve));
      this.#wake = undefined;
    }
  }

  async send(data: string | Uint8Array): Promise<void> {
    await this.opened;
    this.socket.send(typeof data === "string" ? new TextEncoder().encode(data) : data);
  }

  async resize(cols: number, rows: number): Promise<void> {
    await this.opened;
    this.socket.send(JSON.stringify({ type: "resize", cols, rows }));
  }

  close(code = 1000): void {
    this.socket.close(code);
  }
}
