/**
 * Reachability (docs/api.md "Debug and port events"; docs/kubernetes.md "Reachability and the debug stream"): whether an app's tcp ports accept
 * connections, dialled at the pod IP from the runner. It proves "listening", not "routable"
 * (route health says that), and it stops watching a port at its first success.
 */
import { connect } from "node:net";
import { setTimeout as sleep } from "node:timers/promises";
import type { ReachabilityState } from "../../contract/wire.ts";

export interface ReachabilityTimings {
  /** A connect attempt that has not completed by then counts as failed. */
  connectTimeoutMs: number;
  /** Pause after a failed attempt, until the port is reported unreachable. */
  retryMs: number;
  /** Without success for this long since the watch began, the port is reported unreachable (once). */
  unreachableAfterMs: number;
  /** Pause after a failed attempt once the port was reported unreachable. */
  slowRetryMs: number;
}

const DEFAULT_TIMINGS: ReachabilityTimings = {
  connectTimeoutMs: 1000,
  retryMs: 1000,
  unreachableAfterMs: 30_000,
  slowRetryMs: 5000,
};

/** One TCP connect; true once it completes, false on error, timeout or abort. */
function canConnect(host: string, port: number, timeoutMs: number, signal: AbortSignal): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect({ host, port });
    const settle = (ok: boolean) => {
      clearTimeout(timer);
      signal.removeEventListener("abort", onAbort);
      socket.destroy();
      resolve(ok);
    };
    const onAbort = () => settle(false);
    const timer = setTimeout(() => settle(false), timeoutMs);
    signal.addEventListener("abort", onAbort, { once: true });
    socket.once("connect", () => settle(true));
    socket.once("error", () => settle(false));
  });
}

async function watchPort(
  host: string,
  port: number,
  report: (port: number, state: ReachabilityState) => void,
  signal: AbortSignal,
  timings: ReachabilityTimings,
  booted: Promise<void> | undefined,
): Promise<void> {
  // The grace period runs from the watch's start, or from the kernel's boot when one is awaited.
  let startedAt = booted ? undefined : performance.now();
  void booted?.then(() => (startedAt = performance.now()));
  let reportedUnreachable = false;
  report(port, "checking");
  for (;;) {
    const ok = await canConnect(host, port, timings.connectTimeoutMs, signal);
    if (signal.aborted) return;
    if (ok) {
      report(port, "reachable");
      return;
    }
    if (!reportedUnreachable && startedAt !== undefined && performance.now() - startedAt >= timings.unreachableAfterMs) {
      reportedUnreachable = true;
      report(port, "unreachable");
    }
    const paused = await sleep(reportedUnreachable ? timings.slowRetryMs : timings.retryMs, true, { signal }).catch(() => false);
    if (!paused) return;
  }
}

/**
 * Watches each port in parallel: `checking` at once, then `reachable` at the first successful
 * connect; still failing `unreachableAfterMs` after the start → `unreachable` once, after which
 * slower retries may still flip it to `reachable`. An unknown host (no pod IP) reports every
 * port `unreachable` at once and watches nothing. After `signal` aborts nothing more is reported.
 * Pass tcp ports only: udp is never probed. With `booted`, the grace period starts only once it
 * settles: a kernel still booting (fetching its modules) has not failed to listen yet.
 */
export function watchReachability(
  host: string | undefined,
  ports: number[],
  report: (port: number, state: ReachabilityState) => void,
  signal: AbortSignal,
  timings: Partial<ReachabilityTimings> = {},
  booted?: Promise<void>,
): void {
  if (signal.aborted) return;
  if (host === undefined) {
    for (const port of ports) report(port, "unreachable");
    return;
  }
  const resolved = { ...DEFAULT_TIMINGS, ...timings };
  for (const port of ports) {
    // A consumer that throws ends that port's watch; it must not become an unhandled rejection.
    watchPort(host, port, report, signal, resolved, booted).catch(() => undefined);
  }
}
