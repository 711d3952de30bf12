/**
 * Route health (docs/kubernetes.md "Services and routes"): the published hosts' routing objects read until each is
 * programmed or rejected, or the deadline passes; reported to the log (and a first read error
 * to the session's terminal).
 */
import { setTimeout as sleep } from "node:timers/promises";
import type { Logger } from "../../log.ts";
import { deadlineReason, routeReadErrorLine, type RouteVerdict } from "../status/route-health.ts";
import type { PublishedHost, RouteHealthReport, Router } from "./router.ts";

const POLL_INTERVAL_MS = 2000;

export type Reading = { verdict: RouteVerdict } | { error: unknown };

interface HealthWatch {
  sessionId: string;
  layer: Router["layer"];
  hosts: PublishedHost[];
  signal: AbortSignal;
  deadlineMs: number;
  /** One reading per host, in order. */
  read(hosts: PublishedHost[]): Promise<Reading[]>;
  /** Why a host still pending at the deadline is unprogrammed, when no read error explains it. */
  unclaimedReason: string;
  log: Logger;
  report: RouteHealthReport;
}

/** False when aborted during the pause. */
function pause(ms: number, signal: AbortSignal): Promise<boolean> {
  return sleep(ms, true, { signal }).catch(() => false);
}

/**
 * Read every unsettled host now and then every 2 s. Programmed and rejected settle a host;
 * at the deadline every host still pending is unprogrammed. A read error is no verdict: the
 * first is reported once, the last is remembered as the deadline's reason unless a later verdict
 * was read, so a transient error is never blamed for a controller that simply did not answer.
 */
async function followRouteHealth(watch: HealthWatch): Promise<void> {
  const { sessionId, layer, signal, log, report } = watch;
  const deadline = performance.now() + watch.deadlineMs;
  let pending = watch.hosts;
  let readError: unknown;
  let readErrorReported = false;
  if (pending.length === 0 || signal.aborted) return;
  log.debug("session routes pending", { sessionId, layer, hosts: pending.map((h) => h.host) });
  for (const host of pending) report.onState?.(host, "pending");
  while (pending.length > 0) {
    const readings = await watch.read(pending);
    if (signal.aborted) return;
    const unsettled: PublishedHost[] = [];
    pending.forEach(({ host, port }, index) => {
      const reading = readings[index]!;
      if ("error" in reading) {
        readError = reading.error;
        if (!readErrorReported) {
          const line = routeReadErrorLine(reading.error);
          log.warn(line, { sessionId, layer, host, port });
          report.onReadError?.(line);
        }
        readErrorReported = true;
        unsettled.push({ host, port });
        return;
      }
      readError = undefined;
      const { verdict } = reading;
      if (verdict.state === "programmed") {
        log.info("session route programmed", { sessionId, layer, host, port });
        report.onState?.({ host, port }, "programmed");
      } else if (verdict.state === "rejected") {
        log.warn("session route unprogrammed", { sessionId, layer, host, port, reason: verdict.reason });
        report.onState?.({ host, port }, "unprogrammed", verdict.reason);
      } else unsettled.push({ host, port });
    });
    pending = unsettled;
    if (pending.length === 0) return;
    const left = deadline - performance.now();
    if (left <= 0) {
      const reason = deadlineReason(readError, watch.unclaimedReason);
      for (const { host, port } of pending) {
        log.warn("session route unprogrammed", { sessionId, layer, host, port, reason });
        report.onState?.({ host, port }, "unprogrammed", reason);
      }
      return;
    }
    if (!(await pause(Math.min(POLL_INTERVAL_MS, left), signal))) return;
  }
}

export async function readingOf(read: () => Promise<RouteVerdict>): Promise<Reading> {
  try {
    return { verdict: await read() };
  } catch (error) {
    return { error };
  }
}

/** What a layer's route health needs besides the session: how long, why unclaimed, and how to read. */
export interface HealthLayer {
  layer: Router["layer"];
  deadlineMs: number;
  unclaimedReason: string;
  log: Logger;
  read(sessionId: string, hosts: PublishedHost[]): Promise<Reading[]>;
}

/** A router's `watchRouteHealth` for one layer. */
export function routeHealthWatcher(layer: HealthLayer): Router["watchRouteHealth"] {
  return (sessionId, hosts, signal, report = {}) =>
    void followRouteHealth({ ...layer, sessionId, hosts, signal, report, read: (pending) => layer.read(sessionId, pending) });
}
