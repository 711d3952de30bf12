import { describe, expect, it } from "vitest";
import { TIMELINE_MAX_ENTRIES, type TimelineEntry } from "../../src/contract/wire.ts";
import { frameTime, runEndEntry, startFailureReason, withEntry } from "../../src/sessions/timeline.ts";

const admitted: TimelineEntry = { stage: "admitted", at: "2026-12-01T10:00:00.400Z" };
const at = (seconds: number) => new Date(Date.parse("2026-12-01T10:00:00Z") + seconds * 1000).toISOString();

describe("withEntry", () => {
  it("puts an entry in its place by time, whatever order it arrives in", () => {
    let timeline = withEntry([admitted], { stage: "running", at: at(3) });
    timeline = withEntry(timeline, { stage: "container-started", at: at(2) });
    expect(timeline.map((entry) => entry.stage)).toEqual(["admitted", "container-started", "running"]);
  });

  it("keeps a start stage as first seen, and dates nothing before the admission", () => {
    const once = withEntry([admitted], { stage: "scheduled", at: at(0) });
    expect(once).toEqual([admitted, { stage: "scheduled", at: admitted.at }]);
    expect(withEntry(once, { stage: "scheduled", at: at(5) })).toEqual(once);
  });

  it("stays within its bound, dropping the oldest run end and keeping the start's stages", () => {
    let timeline = withEntry([admitted], { stage: "running", at: at(1) });
    for (let run = 1; run <= TIMELINE_MAX_ENTRIES + 5; run++) timeline = withEntry(timeline, { stage: "completed", at: at(1 + run), detail: `run ${run}` });
    expect(timeline).toHaveLength(TIMELINE_MAX_ENTRIES);
    expect(timeline.slice(0, 2).map((entry) => entry.stage)).toEqual(["admitted", "running"]);
    expect(timeline.at(-1)?.detail).toBe(`run ${TIMELINE_MAX_ENTRIES + 5}`);
    expect(timeline[2]?.detail).toBe("run 8");
  });
});

describe("runEndEntry", () => {
  const now = new Date(at(9));
  it("turns a run's end into an entry, and nothing else", () => {
    expect(runEndEntry({ type: "run", app: "app", generation: 1, phase: "completed", code: 0, durationMs: 1200 }, now)).toEqual({
      stage: "completed",
      at: now.toISOString(),
      detail: "app run 1 completed with code 0 after 1200 ms",
    });
    expect(runEndEntry({ type: "run", app: "app", generation: 2, phase: "failed", reason: "UNRESOLVED_REFERENCE" }, now)).toEqual({
      stage: "failed",
      at: now.toISOString(),
      detail: "app run 2 failed: UNRESOLVED_REFERENCE",
    });
    expect(runEndEntry({ type: "run", app: "app", generation: 1, phase: "started", trigger: "initial" }, now)).toBeUndefined();
    expect(runEndEntry({ type: "status", status: { kind: "stopped" } }, now)).toBeUndefined();
  });
});

describe("frameTime", () => {
  it("takes the kernel's timestamp when it is one", () => {
    const fallback = new Date(at(9));
    expect(frameTime("2026-12-01T10:00:02.5Z", fallback)).toBe("2026-12-01T10:00:02.500Z");
    expect(frameTime("soon", fallback)).toBe(fallback.toISOString());
    expect(frameTime(undefined, fallback)).toBe(fallback.toISOString());
  });
});

describe("startFailureReason", () => {
  const got = { building: false, createRefused: false };
  const reached = (...stages: TimelineEntry["stage"][]) => stages.map((stage, index) => ({ stage, at: at(index) }));

  it("names the build while a start was building, whatever the timeline shows", () => {
    expect(startFailureReason(reached("admitted"), { building: true, createRefused: true })).toBe("build");
  });

  it("names the cluster's refusal of the pod, and otherwise the scheduling, before any node took it", () => {
    expect(startFailureReason(reached("admitted"), { building: false, createRefused: true })).toBe("create");
    expect(startFailureReason(reached("admitted"), got)).toBe("scheduling");
  });

  it("names the delivery once placed (scheduled or a warm pod claimed) with no container started", () => {
    expect(startFailureReason(reached("admitted", "scheduled", "bundle-delivered"), got)).toBe("delivery");
    expect(startFailureReason(reached("admitted", "warm-claimed"), got)).toBe("delivery");
  });

  it("names the boot once the container started", () => {
    expect(startFailureReason(reached("admitted", "scheduled", "image-pulled", "container-started"), got)).toBe("boot");
    expect(startFailureReason(reached("admitted", "warm-claimed", "kernel-running", "failed"), got)).toBe("boot");
  });
});
