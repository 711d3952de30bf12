/**
 * A terminal's client socket passed from the api to its own pod's supervisor over the handle
 * channel (handle-channel.ts; docs/relay.md "The handoff"), so that no process stands between
 * the client and the supervisor that speaks its WebSocket. The api sends the socket with the
 * upgrade request it would have made on a connection of its own (terminal-upgrade.ts), and the
 * supervisor reads that request from the socket as if it had come on one. It answers `taken`
 * once it has upgraded the terminal, or gives the socket back with the refusal the api must act
 * on (the session between owners: the api waits and goes where it moved), as it would have
 * answered on the api's connection.
 *
 * Both sides: the messages (validated where they arrive) and moving a socket's handle out of its
 * wrapper and into a new one.
 */
import { Socket } from "node:net";
import type { Duplex } from "node:stream";
import * as v from "valibot";
import type { Logger } from "../log.ts";
import { type HandleChannel, type SocketHandle, connectHandleChannel } from "./handle-channel.ts";
import { SupervisorUnavailableError } from "./client.ts";
import type { SupervisorTarget } from "./link.ts";
import type { Splices } from "./terminal-splice.ts";
import { type UpgradedTerminal, refusal, requestHead } from "./terminal-upgrade.ts";

export const HandoffMessageSchema = v.variant("kind", [
  /** api → supervisor, with the socket: `request` is the upgrade request and what the client sent after it, base64. */
  v.object({ kind: v.literal("terminal"), ticket: v.pipe(v.number(), v.integer()), request: v.string() }),
  /** supervisor → api: the terminal is the supervisor's now. */
  v.object({ kind: v.literal("taken"), ticket: v.pipe(v.number(), v.integer()) }),
  /** supervisor → api: the client's connection closed before its terminal was upgraded. */
  v.object({ kind: v.literal("closed"), ticket: v.pipe(v.number(), v.integer()) }),
  /** supervisor → api, with the socket back: the answer the upgrade got, and what was read from the client after the request, base64. */
  v.object({ kind: v.literal("refused"), ticket: v.pipe(v.number(), v.integer()), status: v.pipe(v.number(), v.integer()), body: v.string(), rest: v.string() }),
]);
export type HandoffMessage = v.InferOutput<typeof HandoffMessageSchema>;

type StreamHandle = { readStop(): number; fd?: number };

/**
 * Takes `socket`'s handle out of its wrapper to be sent: reading stops first (a byte read now
 * would be this process's and lost to the receiver), what was read and not yet consumed is
 * returned, and the wrapper is destroyed without its handle, so it closes nothing and its
 * server's count of connections comes down. Undefined when the socket has no handle (gone).
 */
export function detachHandle(socket: Socket): { handle: SocketHandle; unread: Buffer } | undefined {
  const wrapper = socket as unknown as { _handle: StreamHandle | null };
  const handle = wrapper._handle;
  if (!handle || socket.destroyed) return undefined;
  handle.readStop();
  // Out of the wrapper before its buffer is read: a read with the handle in place starts reading again.
  wrapper._handle = null;
  const chunks: Buffer[] = [];
  for (let chunk: Buffer | null = socket.read(); chunk !== null; chunk = socket.read()) chunks.push(chunk);
  socket.removeAllListeners();
  socket.destroy();
  return { handle, unread: Buffer.concat(chunks) };
}

/** A received handle as a socket, not read until its reader is ready (`resume`). */
export function adoptHandle(handle: SocketHandle): Socket {
  return new Socket({ handle: handle as never, readable: true, writable: true, pauseOnCreate: true } as never);
}

/**
 * What became of a socket offered: the supervisor took it; it was lost with the supervisor (which
 * died holding it: the client's connection ends); or it came back with the refusal to act on and
 * what the supervisor had read from the client.
 */
export type HandoffOutcome = { kind: "taken" } | { kind: "lost" } | { kind: "refused"; socket: Socket; rest: Buffer; refusal: Error };

type Waiting = (message: HandoffMessage | undefined, handle: SocketHandle | undefined) => void;

/** The api's side: offers terminals to its pod's supervisor while the handle channel is open. */
export class TerminalHandoff {
  readonly #waiting = new Map<number, Waiting>();
  readonly #link: { channel(): HandleChannel | undefined; close(): void };
  readonly #log: Logger;
  #nextTicket = 1;

  constructor(path: string, log: Logger) {
    this.#log = log;
    // A supervisor gone before it answered took the sockets it was offered with it.
    const lost = () => {
      const waiting = [...this.#waiting.values()];
      this.#waiting.clear();
      for (const each of waiting) each(undefined, undefined);
    };
    this.#link = connectHandleChannel(path, { message: (message, handle) => this.#receive(message, handle), gone: lost }, log);
  }

  #receive(raw: unknown, handle: SocketHandle | undefined): void {
    const parsed = v.safeParse(HandoffMessageSchema, raw);
    if (!parsed.success || parsed.output.kind === "terminal") {
      this.#log.warn("handle channel: unexpected message", { kind: parsed.success ? parsed.output.kind : undefined });
      return;
    }
    const waiting = this.#waiting.get(parsed.output.ticket);
    this.#waiting.delete(parsed.output.ticket);
    waiting?.(parsed.output, handle);
  }

  /**
   * Passes `socket` (its upgrade request read; `request`: the one to make on the supervisor) to
   * the supervisor; undefined, and the socket untouched, when there is no channel open.
   */
  offer(socket: Socket, request: Buffer): Promise<HandoffOutcome> | undefined {
    const channel = this.#link.channel();
    if (!channel) return undefined;
    const detached = detachHandle(socket);
    if (!detached) return Promise.resolve({ kind: "lost" });
    const ticket = this.#nextTicket++;
    const bytes = Buffer.concat([request, detached.unread]);
    return new Promise<HandoffOutcome>((resolve) => {
      let sent = false;
      // Not sent (the channel closed first, or while Node queued it behind an unacknowledged
      // handle): the handle is still this process's, and the terminal goes the spliced way.
      const unsent = (error?: unknown) =>
        resolve({ kind: "refused", socket: adoptHandle(detached.handle), rest: detached.unread, refusal: new SupervisorUnavailableError("the handle channel closed", { cause: error }) });
      this.#waiting.set(ticket, (message, handle) => {
        if (message?.kind === "taken") return resolve({ kind: "taken" });
        if (!message && !sent) return unsent();
        if (message?.kind !== "refused" || !handle) return resolve({ kind: "lost" });
        resolve({ kind: "refused", socket: adoptHandle(handle), rest: Buffer.from(message.rest, "base64"), refusal: refusal(message.status, message.body) });
      });
      channel.send({ kind: "terminal", ticket, request: bytes.toString("base64") }, detached.handle).then(
        () => (sent = true),
        (error: unknown) => {
          if (!this.#waiting.delete(ticket)) return;
          unsent(error);
        },
      );
    });
  }

  close(): void {
    this.#link.close();
  }
}

/**
 * A terminal the runner's own server accepted (its origin allowed). When the supervisor the api
 * would ask first is this pod's and the channel is open, it is handed the client's socket with the
 * upgrade request for `path` and speaks to the client alone; given back (the session moved
 * meanwhile), or not handed at all, the socket is spliced to wherever `open` finds the session.
 */
export function handOverOrSplice(terminal: {
  socket: Duplex;
  key: string;
  head: Buffer;
  splices: Splices;
  handoff: TerminalHandoff | undefined;
  target: SupervisorTarget;
  path: string;
  headers: Record<string, string | undefined>;
  open: (clientGone: AbortSignal) => Promise<UpgradedTerminal>;
}): void {
  const { socket, key, head, splices, handoff, target, open } = terminal;
  const handed = "socketPath" in target && socket instanceof Socket ? handoff?.offer(socket, Buffer.concat([requestHead(target, terminal.path, terminal.headers), head])) : undefined;
  if (!handed) return splices.splice(socket, key, head, open);
  void handed.then((outcome) => {
    if (outcome.kind === "refused") splices.splice(outcome.socket, key, outcome.rest, open);
  });
}
