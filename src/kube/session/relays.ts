/**
 * What follows an app once its pod serves (docs/api.md "Debug and port events"): the kernel's debug stream and the
 * reachability of its tcp ports, both until `signal`. Shared by run and watch sessions.
 */
import { type DebugFrame, isEventFrame, type PortMapping, type ReachabilityState } from "../../contract/wire.ts";
import type { Logger } from "../../log.ts";
import { relayDebugStream } from "../io/debug-relay.ts";
import { watchReachability } from "../io/reachability.ts";

/**
 * Frames by which a kernel says its boot is over (it listens now, or never will). A kernel
 * fetching its modules can take longer than the 30 s reachability grace.
 */
const BOOT_OVER = new Set(["Kernel.Started", "Kernel.PortsResolved", "Kernel.Stopped", "Kernel.RunFailed"]);
/** A kernel that says nothing this long is taken as booted, so `unreachable` still comes. */
const LONGEST_BOOT_MS = 120_000;

export type AppFollowInput = {
  podIp: string | undefined;
  /** The inspector's port; undefined without a debug stream. */
  inspectPort: number | undefined;
  ports: readonly PortMapping[];
  signal: AbortSignal;
  onDebug(frame: DebugFrame): void;
  onReachability(port: number, state: ReachabilityState): void;
  say(text: string): void;
  /** The session's logger: the debug relay's reconnects and its consumer's failures. */
  log: Logger;
};

/** Handle of one followed app: watch more ports (a watch session's port change). */
export type AppFollower = { watchPorts(ports: readonly PortMapping[]): void };

export function followApp(input: AppFollowInput): AppFollower {
  const { podIp, signal } = input;
  let booted: Promise<void> | undefined;
  if (input.inspectPort !== undefined) {
    if (podIp) {
      let boot!: () => void;
      booted = new Promise<void>((resolve) => (boot = resolve));
      setTimeout(boot, LONGEST_BOOT_MS).unref();
      const url = `http://${podIp}:${input.inspectPort}/events`;
      void relayDebugStream(url, (frame) => {
        if (isEventFrame(frame) && BOOT_OVER.has(frame.event ?? "")) boot();
        input.onDebug(frame);
      }, signal, { log: input.log });
    } else input.say("debug stream unavailable: pod IP unknown");
  }
  const watchPorts = (ports: readonly PortMapping[]) => {
    const tcp = ports.filter((port) => port.protocol === "tcp").map((port) => port.port);
    if (tcp.length > 0) watchReachability(podIp, tcp, input.onReachability, signal, {}, booted);
  };
  watchPorts(input.ports);
  return { watchPorts };
}
