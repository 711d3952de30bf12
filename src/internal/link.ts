/**
 * One HTTP/2 connection from this api process to one supervisor, over its Unix socket or, to a
 * peer replica, over TCP with the shared credential (docs/relay.md). Every call and event
 * stream is a stream of it, each with its own flow-control window, so a stream whose
 * reader stalls holds back only itself. The connection is opened on first use and again after
 * it closed (the supervisor restarted); a stream started on a connection that fails errors.
 */
import { type ClientHttp2Session, type ClientHttp2Stream, type IncomingHttpHeaders, type OutgoingHttpHeaders, connect } from "node:http2";
import { connect as netConnect } from "node:net";
import { type Keepalive, PEER_KEEPALIVE, keepAlive } from "./keepalive.ts";
import { INTERNAL_PROTOCOL_VERSION, PEER_CREDENTIAL_HEADER, PROTOCOL_HEADER, linkSettings, CONNECTION_WINDOW_BYTES, SESSION_MEMORY_MB } from "./protocol.ts";

/**
 * Where a supervisor is: its Unix socket, or a peer's TCP address with the credential (and the
 * PING cadence that finds it dead, PEER_KEEPALIVE unless given).
 */
export type SupervisorTarget = { socketPath: string } | { host: string; port: number; credential: string; keepalive?: Keepalive };

const CONNECT_TIMEOUT_MS = 2_000;

/**
 * The owned stream's error listener. Not a closure made in `open`: it stays on the stream for
 * an event stream's whole life and would keep `open`'s scope with it (the
 * settled promise's functions and the answer's head).
 */
function ignoreError(): void {}

export class LinkError extends Error {
  override name = "LinkError";
}

export type LinkResponse = { status: number; headers: IncomingHttpHeaders; stream: ClientHttp2Stream };

export class SupervisorLink {
  #session: ClientHttp2Session | undefined;
  readonly #extraHeaders: OutgoingHttpHeaders;

  constructor(readonly target: SupervisorTarget) {
    this.#extraHeaders = "credential" in target ? { [PEER_CREDENTIAL_HEADER]: target.credential } : {};
  }

  /**
   * Opens a stream; resolves with the answer's head once it arrives.
   */
  open(headers: OutgoingHttpHeaders, options: { body?: string } = {}): Promise<LinkResponse> {
    return new Promise((resolve, reject) => {
      let stream: ClientHttp2Stream;
      try {
        const session = this.#current();
        stream = session.request(
          { [PROTOCOL_HEADER]: INTERNAL_PROTOCOL_VERSION, ...this.#extraHeaders, ...headers },
          { endStream: options.body === undefined },
        );
      } catch (error) {
        reject(new LinkError("could not open a stream to the supervisor", { cause: error }));
        return;
      }
      const failed = (error?: unknown) => {
        stream.destroy();
        reject(new LinkError("the supervisor connection failed", { cause: error ?? new Error("stream closed before its answer") }));
      };
      stream.once("error", failed);
      stream.once("close", failed);
      stream.once("response", (head) => {
        stream.off("error", failed);
        stream.off("close", failed);
        // From here on the caller owns the stream; an error with no listener must not crash.
        stream.on("error", ignoreError);
        resolve({ status: Number(head[":status"]), headers: head, stream });
      });
      if (options.body !== undefined) stream.end(options.body);
    });
  }

  close(): Promise<void> {
    const session = this.#session;
    this.#session = undefined;
    if (!session || session.closed) return Promise.resolve();
    return new Promise((resolve) => {
      session.close(() => resolve());
      // Streams still open (event streams) are cut, not waited for.
      setImmediate(() => session.destroy());
    });
  }

  #current(): ClientHttp2Session {
    const existing = this.#session;
    if (existing && !existing.closed && !existing.destroyed) return existing;
    const session = this.#connect();
    this.#session = session;
    const forget = () => {
      if (this.#session === session) this.#session = undefined;
    };
    session.on("close", forget);
    session.on("goaway", forget);
    // A failed connect or a dropped connection errors every stream on it; the session's own
    // error is reported through them.
    session.on("error", forget);
    // node announces "connect" on a session destroyed while it was connecting (the deadline
    // below, on a process too starved to see the socket connect in time); a window set on it
    // would throw out of the event and end the process.
    session.once("connect", () => session.destroyed || session.setLocalWindowSize(CONNECTION_WINDOW_BYTES));
    const timer = setTimeout(() => {
      if (!session.connecting) return;
      session.destroy(new LinkError(`no connection to the supervisor within ${CONNECT_TIMEOUT_MS} ms`));
    }, CONNECT_TIMEOUT_MS);
    timer.unref();
    session.once("connect", () => clearTimeout(timer));
    session.once("close", () => clearTimeout(timer));
    // Idle, the connection must not keep the process alive.
    session.unref();
    return session;
  }

  #connect(): ClientHttp2Session {
    const target = this.target;
    const options = { settings: linkSettings, maxSessionMemory: SESSION_MEMORY_MB, peerMaxConcurrentStreams: linkSettings.maxConcurrentStreams };
    if ("socketPath" in target) return connect("http://supervisor", { ...options, createConnection: () => netConnect(target.socketPath) });
    const host = target.host.includes(":") ? `[${target.host}]` : target.host;
    // No Nagle: a keystroke's frame must not wait for the previous segment's acknowledgement.
    const createConnection = () => netConnect({ host: target.host, port: target.port, noDelay: true });
    const session = connect(`http://${host}:${target.port}`, { ...options, createConnection });
    // A Unix socket's peer is this pod's own supervisor: its death closes the socket. A TCP
    // peer can vanish without a word.
    keepAlive(session, target.keepalive ?? PEER_KEEPALIVE);
    return session;
  }
}
