/**
 * Terminals whose client sockets the api of this pod handed over (src/internal/terminal-handoff.ts;
 * docs/relay.md "The handoff"). A handed socket is read as a connection of the api's own would be:
 * the upgrade request the api sent with it first, then whatever the client sends, through the
 * same HTTP/1.1 server and upgrade handler (terminal-upgrades.ts). What differs is the answer:
 * a terminal upgraded is reported `taken`; a refusal the api must act on goes back to the api with
 * the socket, instead of being written to a client that cannot read it.
 */
import type { Server as Http1Server } from "node:http";
import type { Duplex } from "node:stream";
import * as v from "valibot";
import type { HandleChannel, SocketHandle } from "../internal/handle-channel.ts";
import { HandoffMessageSchema, adoptHandle, detachHandle } from "../internal/terminal-handoff.ts";
import type { Logger } from "../log.ts";

type Handed = { ticket: number; channel: HandleChannel };

export class TerminalHandoffs {
  readonly #handed = new WeakMap<Duplex, Handed>();
  readonly #log: Logger;
  #http1: Http1Server | undefined;
  /** A handed socket closed before it was answered (its client gone): the api stops waiting. One function for all. */
  readonly #closedEarly: (this: Duplex) => void;

  constructor(log: Logger) {
    this.#log = log;
    const handed = this.#handed;
    this.#closedEarly = function (this: Duplex) {
      const waiting = handed.get(this);
      handed.delete(this);
      waiting?.channel.send({ kind: "closed", ticket: waiting.ticket }).catch(() => undefined);
    };
  }

  /** The server that reads a handed socket's request (the internal listener's HTTP/1.1 side). */
  readFrom(http1: Http1Server): void {
    this.#http1 = http1;
  }

  /** A message of the handle channel: a terminal the api hands over, with its socket. */
  receive(raw: unknown, handle: SocketHandle | undefined, channel: HandleChannel): void {
    const parsed = v.safeParse(HandoffMessageSchema, raw);
    if (!parsed.success || parsed.output.kind !== "terminal" || !handle || !this.#http1) {
      this.#log.warn("handle channel: unexpected message", { kind: parsed.success ? parsed.output.kind : undefined, handle: handle !== undefined });
      if (handle) adoptHandle(handle).destroy();
      return;
    }
    const socket = adoptHandle(handle);
    this.#handed.set(socket, { ticket: parsed.output.ticket, channel });
    socket.once("close", this.#closedEarly);
    socket.unshift(Buffer.from(parsed.output.request, "base64"));
    this.#http1.emit("connection", socket);
    socket.resume();
  }

  isHanded(socket: Duplex): boolean {
    return this.#handed.has(socket);
  }

  /** Tells the api that handed `socket` over that its terminal is upgraded here. */
  taken(socket: Duplex): void {
    const handed = this.#handed.get(socket);
    if (!handed) return;
    this.#handed.delete(socket);
    socket.off("close", this.#closedEarly);
    handed.channel.send({ kind: "taken", ticket: handed.ticket }).catch(() => undefined);
  }

  /**
   * Gives a handed `socket` back with the answer its upgrade got (`head`: what followed the
   * request); false when it was not handed over (the answer is written to it as usual).
   */
  refuse(socket: Duplex, status: number, body: string, head: Buffer): boolean {
    const handed = this.#handed.get(socket);
    if (!handed) return false;
    this.#handed.delete(socket);
    const detached = detachHandle(socket as never);
    if (!detached) return true;
    const rest = Buffer.concat([head, detached.unread]).toString("base64");
    handed.channel.send({ kind: "refused", ticket: handed.ticket, status, body, rest }, detached.handle).catch(() => {
      // The api went meanwhile: nobody is left to answer the client.
      adoptHandle(detached.handle).destroy();
    });
    return true;
  }
}
