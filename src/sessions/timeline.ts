/**
 * A session's timeline (docs/api.md "The timeline"): its start's stages and its runs' ends, each
 * with its time. Pure: every entry comes with its time, nothing reads a clock.
 */
import { type RunEvent, TIMELINE_MAX_ENTRIES, type TimelineEntry, type TimelineStage } from "../contract/wire.ts";

/** Stages that can happen again (a watch session's every run, a resumed start's failure). */
const REPEATABLE = new Set<TimelineStage>(["completed", "failed"]);

/**
 * `timeline` with `entry` in its place by time (a stage the pod's status dates may arrive after
 * one the runner saw later). A start stage already present is kept as first seen: a supervisor
 * that adopts a pod reads the same times again. Nothing is dated before the admission: the
 * cluster dates a pod's status in whole seconds, so a pod scheduled 300 ms after its session
 * was admitted reads as scheduled up to a second before. Over the bound, the oldest repeatable
 * entry goes, so the start's stages stay and the latest ends are kept.
 */
export function withEntry(timeline: readonly TimelineEntry[], entry: TimelineEntry): TimelineEntry[] {
  if (!REPEATABLE.has(entry.stage) && timeline.some((kept) => kept.stage === entry.stage)) return [...timeline];
  const admitted = timeline.find((kept) => kept.stage === "admitted");
  if (admitted && Date.parse(entry.at) < Date.parse(admitted.at)) entry = { ...entry, at: admitted.at };
  const at = Date.parse(entry.at);
  const index = timeline.findIndex((kept) => Date.parse(kept.at) > at);
  const next = index === -1 ? [...timeline, entry] : [...timeline.slice(0, index), entry, ...timeline.slice(index)];
  if (next.length <= TIMELINE_MAX_ENTRIES) return next;
  const oldest = next.findIndex((kept) => REPEATABLE.has(kept.stage));
  return next.filter((_, position) => position !== (oldest === -1 ? 0 : oldest));
}

/** The entry a run's end makes: `completed` with its code and duration, or `failed` with its reason. */
export function runEndEntry(event: RunEvent, now: Date): TimelineEntry | undefined {
  if (event.type !== "run" || event.phase === "started") return undefined;
  const app = `${event.app} run ${event.generation}`;
  if (event.phase === "failed") return { stage: "failed", at: now.toISOString(), detail: `${app} failed: ${event.reason}`.slice(0, 500) };
  const took = event.durationMs === undefined ? "" : ` after ${event.durationMs} ms`;
  return { stage: "completed", at: now.toISOString(), detail: `${app} completed with code ${event.code}${took}` };
}

/**
 * Why a start failed, as far as a figure can say it (docs/monitoring.md "Why starts fail"): the
 * step it did not get through. `build`: the image build; `create`: the cluster refused the pod;
 * `scheduling`: no node took it; `delivery`: placed, but its container never started (the
 * bundle fetch, the image pull, the container's creation); `boot`: the container started and
 * the session never reached running. A bounded set, so it can label a counter.
 */
export type StartFailureReason = "build" | "create" | "scheduling" | "delivery" | "boot";

export function startFailureReason(
  timeline: readonly TimelineEntry[],
  got: { building: boolean; createRefused: boolean },
): StartFailureReason {
  if (got.building) return "build";
  const reached = new Set(timeline.map((entry) => entry.stage));
  if (reached.has("container-started") || reached.has("kernel-running")) return "boot";
  if (reached.has("scheduled") || reached.has("warm-claimed")) return "delivery";
  return got.createRefused ? "create" : "scheduling";
}

/** The time a kernel frame carries, when it is one; else `fallback`. */
export function frameTime(timestamp: string | undefined, fallback: Date): string {
  return timestamp !== undefined && !Number.isNaN(Date.parse(timestamp)) ? new Date(timestamp).toISOString() : fallback.toISOString();
}
