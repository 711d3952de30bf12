/**
 * A channel that carries sockets between the api and the supervisor of one pod (docs/relay.md
 * "The handoff"): a Unix socket of its own beside the internal one, over which Node's IPC, the
 * one Node API that passes an open socket to another process (SCM_RIGHTS), is opened at both ends.
 *
 * Node opens IPC only between a parent and the child it forked, and the two processes are
 * siblings here (two containers). So each end opens it the way a forked child's bootstrap does,
 * on the file descriptor of a connected Unix socket: `child_process._forkChild(fd)`, exported by
 * Node since 0.x but not documented. That puts the channel on `process` (`process.send`, the
 * `message` event), so a process holds one channel at a time, and only a process that has none of
 * its own: one started by `fork` (under `npm start`, or by a test) keeps the splice. When the other
 * end goes, the listeners the channel put on `process` are taken off again, so that the next
 * channel (the other process restarted) is opened on a clean `process`: left on, the old
 * channel's handle-acknowledgement listener answers the new channel's too and Node asserts.
 *
 * Every other way this could fail (a Node without `_forkChild`, a path too long for a Unix
 * socket) leaves the channel closed, and the api splices terminals as before.
 */
import childProcess from "node:child_process";
import type { EventEmitter } from "node:events";
import { chmod } from "node:fs/promises";
import { type Server, Socket, createServer } from "node:net";
import type { Logger } from "../log.ts";

type ForkChild = (fd: number, serialization: "json" | "advanced") => void;
/** What a channel hands over: a socket's own handle (a TCP or pipe wrap). */
export type SocketHandle = object;
/** A message that came over `channel`, and the handle sent with it. */
export type ChannelListener = (message: unknown, handle: SocketHandle | undefined, channel: HandleChannel) => void;

/** How long the api waits before connecting again: the supervisor starts, restarts, or holds another api's channel. */
const DIAL_BACKOFF_MS = [100, 250, 500, 1000, 2000];
/** Events the channel's setup adds listeners for on `process`; each is taken off when it closes. */
const CHANNEL_EVENTS = ["internalMessage", "newListener", "removeListener"] as const;

/** The undocumented export a forked child's bootstrap opens its channel with, when this Node has it. */
function forkChild(): ForkChild | undefined {
  const candidate = (childProcess as unknown as { _forkChild?: unknown })._forkChild;
  return typeof candidate === "function" ? (candidate as ForkChild) : undefined;
}

/** Whether this process can open a handle channel: Node has the means, and no channel of its own is open. */
export function handleChannelPossible(): boolean {
  return forkChild() !== undefined && !process.channel;
}

/** The open file descriptor under a connected socket that nothing reads yet. */
function descriptorOf(socket: Socket): number | undefined {
  const fd = (socket as unknown as { _handle?: { fd?: unknown } })._handle?.fd;
  return typeof fd === "number" && fd >= 0 ? fd : undefined;
}

/**
 * The sockets whose descriptors became channels. Their wrappers still name the descriptor, which
 * the channel closes when it ends; a wrapper closed after that would close whatever took the
 * number next. They are kept here, never read, written or closed: one object per channel opened.
 */
const adopted = new Set<Socket>();

export type HandleChannel = {
  /** Sends `message`, and `handle` with it: once sent, this process's copy of the handle is closed; not sent, it is the caller's still. */
  send(message: object, handle?: SocketHandle): Promise<void>;
  /** Resolves when the other end has gone (or this one closed it). */
  readonly gone: Promise<void>;
  close(): void;
};

/** Opens the channel on `socket`'s descriptor; `listener` gets every message. */
function openOn(socket: Socket, listener: ChannelListener): HandleChannel | undefined {
  const open = forkChild();
  const fd = descriptorOf(socket);
  if (!open || fd === undefined || process.channel) return undefined;
  adopted.add(socket);
  const events = process as unknown as EventEmitter;
  const before = new Map(CHANNEL_EVENTS.map((event) => [event, new Set(events.listeners(event))]));
  open(fd, "json");
  const added = CHANNEL_EVENTS.flatMap((event) => events.listeners(event).filter((each) => !before.get(event)!.has(each)).map((each) => [event, each] as const));
  const onMessage = (message: unknown, handle: unknown) => listener(message, (handle ?? undefined) as SocketHandle | undefined, channel);
  process.on("message", onMessage);
  const gone = new Promise<void>((resolve) =>
    process.once("disconnect", () => {
      process.off("message", onMessage);
      // After the disconnect's own listeners ran: the channel's are taken off for the next one.
      setImmediate(() => {
        for (const [event, each] of added) events.off(event, each as (...args: unknown[]) => void);
        resolve();
      });
    }),
  );
  const channel: HandleChannel = {
    send: (message, handle) =>
      new Promise((resolve, reject) => {
        const send = process.send as ((message: object, handle: SocketHandle | undefined, options: object, callback: (error: Error | null) => void) => boolean) | undefined;
        if (!process.connected || !send) return reject(new Error("the handle channel is closed"));
        // A callback always: without one a failed send is an 'error' event on process.
        send.call(process, message, handle, {}, (error) => {
          if (error) return reject(error);
          // Node closes only the handles it wrapped itself; a raw one sent is this process's copy, closed here.
          (handle as { close?: () => void } | undefined)?.close?.();
          resolve();
        });
      }),
    gone,
    close: () => {
      if (process.connected) process.disconnect();
    },
  };
  return channel;
}

/** The handoff socket's path beside the supervisor's internal socket. */
export const handoffSocketPath = (internalSocketPath: string): string => `${internalSocketPath}.handoff`;

/**
 * The supervisor's end: listens at `path` (mode 0600, as the internal socket) and opens a channel
 * on the api's connection. One api at a time; another connecting meanwhile is closed and tries
 * again once the first has gone.
 */
export async function serveHandleChannel(path: string, listener: ChannelListener, log: Logger): Promise<{ close(): void }> {
  let current: HandleChannel | undefined;
  const server: Server = createServer({ pauseOnConnect: true }, (socket) => {
    if (current) return socket.destroy();
    current = openOn(socket, listener);
    if (!current) {
      socket.destroy();
      return;
    }
    log.debug("handle channel opened");
    const channel = current;
    void channel.gone.then(() => {
      if (current === channel) current = undefined;
      log.debug("handle channel closed");
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(path, () => {
      server.off("error", reject);
      resolve();
    });
  });
  await chmod(path, 0o600);
  return {
    // Not waited for: the listener counts the adopted connection, whose wrapper is never closed.
    close: () => {
      current?.close();
      server.close();
    },
  };
}

/**
 * The api's end: connects to `path` and keeps a channel open, connecting again (backing off)
 * while the supervisor is not there or restarts. `channel()` is the open one, or undefined while
 * there is none.
 */
export function connectHandleChannel(path: string, on: { message: ChannelListener; gone: () => void }, log: Logger): { channel(): HandleChannel | undefined; close(): void } {
  let current: HandleChannel | undefined;
  let failures = 0;
  let closed = false;
  let timer: NodeJS.Timeout | undefined;
  const again = () => {
    if (closed) return;
    timer = setTimeout(dial, DIAL_BACKOFF_MS[Math.min(failures++, DIAL_BACKOFF_MS.length - 1)]);
    timer.unref();
  };
  const dial = () => {
    if (closed || !handleChannelPossible()) return;
    // Paused before it connects: nothing may read the descriptor the channel is opened on.
    const socket = new Socket();
    socket.pause();
    socket.once("error", again);
    socket.connect(path, () => {
      socket.off("error", again);
      const channel = openOn(socket, on.message);
      if (!channel) {
        socket.destroy();
        return again();
      }
      failures = 0;
      current = channel;
      log.debug("handle channel opened", { path });
      void channel.gone.then(() => {
        current = undefined;
        log.debug("handle channel closed", { path });
        on.gone();
        again();
      });
    });
  };
  dial();
  return {
    channel: () => current,
    close: () => {
      closed = true;
      if (timer) clearTimeout(timer);
      current?.close();
    },
  };
}
