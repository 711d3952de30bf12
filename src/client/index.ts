/**
 * A typed client of the `/v1` contract, for scripts and tests: JSON calls, the event stream
 * as an async iterator (reconnecting with Last-Event-ID), and the terminal WebSocket with its
 * binary framing.
 */
import { fetch, WebSocket } from "undici";
import type { AppSessionBody, CreateSessionBody, SetAppsBody, WorkspaceChangeSetBody } from "../contract/requests.ts";
import { decodeByteFrame } from "../contract/streams.ts";
import type {
  AvailabilityReport,
  ByteStreamTag,
  CreatedSession,
  ProbeConfig,
  RunEvent,
  SessionDocument,
  WorkspaceApplyResult,
  WorkspaceFile,
  WorkspaceTree,
} from "../contract/wire.ts";
import { SseParser } from "./sse.ts";

/** A non-2xx answer; `body` is the runner's JSON error body. */
export class RunnerError extends Error {
  override name = "RunnerError";
  constructor(
    readonly status: number,
    readonly body: { error?: string; message?: string; [key: string]: unknown } | undefined,
  ) {
    super(`runner returned HTTP ${status}${body?.message ? `: ${body.message}` : body?.error ? `: ${body.error}` : ""}`);
  }
}

/** One event from the stream: a RunEvent with its id, or a gap marker. */
export type StreamItem = { id: number; event: RunEvent } | { gap: true };

export type TerminalFrame =
  | { kind: "bytes"; seq: number; tag: ByteStreamTag; payload: Uint8Array }
  | { kind: "control"; message: { type: string; [key: string]: unknown } };

export type RunnerClientOptions = {
  /** Sent as x-telo-accepted-terms on session creation. */
  acceptedTerms?: string;
  /** Extra headers on every HTTP request (e.g. Origin). */
  headers?: Record<string, string>;
};

// Clients of the request schemas send their input shape; defaults are filled by the runner.
type CreateSessionInput = Omit<CreateSessionBody, "inspect" | "mode"> & Partial<Pick<CreateSessionBody, "inspect" | "mode">>;
type AppSessionInput = Omit<AppSessionBody, "inspect"> & Partial<Pick<AppSessionBody, "inspect">>;

export class RunnerClient {
  readonly baseUrl: string;

  constructor(
    baseUrl: string,
    readonly options: RunnerClientOptions = {},
  ) {
    this.baseUrl = baseUrl.replace(/\/+$/, "");
  }

  health(): Promise<{ ok: true; version: string }> {
    return this.#json("GET", "/v1/health");
  }

  capabilities(): Promise<Record<string, unknown>> {
    return this.#json("GET", "/v1/capabilities");
  }

  probe(config: ProbeConfig): Promise<AvailabilityReport> {
    return this.#json("POST", "/v1/probe", { config });
  }

  createSession(body: CreateSessionInput): Promise<CreatedSession> {
    return this.#json("POST", "/v1/sessions", body, this.#termsHeader());
  }

  createAppSession(name: string, body: AppSessionInput = {}): Promise<CreatedSession> {
    return this.#json("POST", `/v1/apps/${encodeURIComponent(name)}/sessions`, body, this.#termsHeader());
  }

  getSession(id: string): Promise<SessionDocument> {
    return this.#json("GET", `/v1/sessions/${encodeURIComponent(id)}`);
  }

  async deleteSession(id: string): Promise<void> {
    await this.#json("DELETE", `/v1/sessions/${encodeURIComponent(id)}`);
  }

  workspaceTree(id: string): Promise<WorkspaceTree> {
    return this.#json("GET", `/v1/sessions/${encodeURIComponent(id)}/workspace`);
  }

  applyWorkspace(id: string, changes: WorkspaceChangeSetBody): Promise<WorkspaceApplyResult> {
    return this.#json("POST", `/v1/sessions/${encodeURIComponent(id)}/workspace`, changes);
  }

  workspaceFile(id: string, path: string): Promise<WorkspaceFile> {
    return this.#json("GET", `/v1/sessions/${encodeURIComponent(id)}/workspace/file?${new URLSearchParams({ path })}`);
  }

  reload(id: string, app?: string): Promise<{ reloaded: string[] }> {
    const query = app === undefined ? "" : `?${new URLSearchParams({ app })}`;
    return this.#json("POST", `/v1/sessions/${encodeURIComponent(id)}/reload${query}`);
  }

  setApps(id: string, body: SetAppsBody): Promise<{ apps: string[] }> {
    return this.#json("PUT", `/v1/sessions/${encodeURIComponent(id)}/apps`, body);
  }

  resume(id: string): Promise<{ sessionId: string }> {
    return this.#json("POST", `/v1/sessions/${encodeURIComponent(id)}/resume`);
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
        const response = await fetch(`${this.baseUrl}/v1/sessions/${encodeURIComponent(id)}/events`, {
          headers: { ...this.options.headers, accept: "text/event-stream", ...(lastId > 0 && { "last-event-id": String(lastId) }) },
          ...(options.signal && { signal: options.signal }),
        });
        if (!response.ok) throw new RunnerError(response.status, await readErrorBody(response));
        const parser = new SseParser();
        const decoder = new TextDecoder();
        for await (const chunk of response.body as AsyncIterable<Uint8Array>) {
          for (const message of parser.push(decoder.decode(chunk, { stream: true }))) {
            if (message.event === "gap") {
              yield { gap: true };
              continue;
            }
            const event = JSON.parse(message.data) as RunEvent;
            if (message.id !== undefined) lastId = message.id;
            yield { id: message.id ?? 0, event };
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
    const url = new URL(`${this.baseUrl}/v1/sessions/${encodeURIComponent(id)}/io`);
    url.protocol = url.protocol === "https:" ? "wss:" : "ws:";
    if (options.app !== undefined) url.searchParams.set("app", options.app);
    if (options.lastSeq !== undefined) url.searchParams.set("lastSeq", String(options.lastSeq));
    const headers = options.origin !== undefined ? { origin: options.origin } : undefined;
    return new Terminal(new WebSocket(url, headers ? { headers } : undefined));
  }

  #termsHeader(): Record<string, string> {
    return this.options.acceptedTerms !== undefined ? { "x-telo-accepted-terms": this.options.acceptedTerms } : {};
  }

  async #json<T>(method: string, path: string, body?: unknown, headers: Record<string, string> = {}): Promise<T> {
    const response = await fetch(`${this.baseUrl}${path}`, {
      method,
      headers: { ...this.options.headers, ...headers, ...(body !== undefined && { "content-type": "application/json" }) },
      ...(body !== undefined && { body: JSON.stringify(body) }),
    });
    if (!response.ok) throw new RunnerError(response.status, await readErrorBody(response));
    const text = await response.text();
    return (text === "" ? undefined : JSON.parse(text)) as T;
  }
}

async function readErrorBody(response: { text(): Promise<string> }): Promise<RunnerError["body"]> {
  const text = await response.text();
  try {
    return JSON.parse(text) as RunnerError["body"];
  } catch {
    return { message: text };
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
