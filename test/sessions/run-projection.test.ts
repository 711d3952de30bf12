import { describe, expect, it } from "vitest";
import { RunProjection } from "../../src/sessions/run-projection.ts";

const frame = (event: string, payload?: unknown) => ({ kind: "event", timestamp: "t", event, payload });

describe("RunProjection", () => {
  it("opens on Starting and completes on Stopped with the exit code and duration", () => {
    const run = new RunProjection("web", "initial");
    expect(run.onFrame(frame("Kernel.Starting"), 1000)).toEqual([{ type: "run", app: "web", generation: 1, phase: "started", trigger: "initial" }]);
    expect(run.onFrame(frame("Kernel.Started"), 1100)).toEqual([]);
    expect(run.onFrame(frame("Kernel.Stopped", { exitCode: 0 }), 1500)).toEqual([
      { type: "run", app: "web", generation: 1, phase: "completed", code: 0, durationMs: 500 },
    ]);
  });

  it("passes on the version Kernel.Starting reports, unjudged, and nothing when it reports none", () => {
    const run = new RunProjection("web", "initial");
    expect(run.onFrame(frame("Kernel.Starting", { version: "0.97.0-weird+x" }), 0)).toEqual([
      { type: "run", app: "web", generation: 1, phase: "started", trigger: "initial", telo: "0.97.0-weird+x" },
    ]);
    run.onFrame(frame("Kernel.Stopped", { exitCode: 0 }), 1);
    expect(run.onFrame(frame("Kernel.Starting", { version: "" }), 2)[0]).not.toHaveProperty("telo");
    run.onFrame(frame("Kernel.Stopped", { exitCode: 0 }), 3);
    expect(run.onFrame(frame("Kernel.Starting", { version: 97 }), 4)[0]).not.toHaveProperty("telo");
  });

  it("falls back to the watch trigger, and a manual trigger applies once", () => {
    const run = new RunProjection("web", "initial");
    run.onFrame(frame("Kernel.Starting"), 0);
    run.onFrame(frame("Kernel.Stopped"), 1);
    expect(run.onFrame(frame("Kernel.Starting"), 2)[0]).toMatchObject({ generation: 2, trigger: "watch" });
    run.onFrame(frame("Kernel.Stopped"), 3);
    run.setNextTrigger("manual");
    expect(run.onFrame(frame("Kernel.Starting"), 4)[0]).toMatchObject({ generation: 3, trigger: "manual" });
    run.onFrame(frame("Kernel.Stopped"), 5);
    expect(run.onFrame(frame("Kernel.Starting"), 6)[0]).toMatchObject({ generation: 4, trigger: "watch" });
  });

  it("counts a load failure without Starting as one generation, and Starting+RunFailed once", () => {
    const run = new RunProjection("web", undefined);
    expect(run.onFrame(frame("Kernel.RunFailed", { code: "E_PARSE", message: "bad" }), 0)).toEqual([
      { type: "run", app: "web", generation: 1, phase: "started", trigger: "watch" },
      { type: "run", app: "web", generation: 1, phase: "failed", reason: "E_PARSE" },
    ]);
    run.onFrame(frame("Kernel.Starting"), 1);
    expect(run.onFrame(frame("Kernel.RunFailed", { message: "boom" }), 2)).toEqual([
      { type: "run", app: "web", generation: 2, phase: "failed", reason: "boom" },
    ]);
    run.onFrame(frame("Kernel.Starting"), 3);
    expect(run.onFrame(frame("Kernel.RunFailed", {}), 4)).toEqual([{ type: "run", app: "web", generation: 3, phase: "failed", reason: "run failed" }]);
  });

  it("emits nothing for Stopped without an open generation (no re-emitted completion)", () => {
    const run = new RunProjection("web", "initial");
    expect(run.onFrame(frame("Kernel.Stopped"), 0)).toEqual([]);
    run.onFrame(frame("Kernel.Starting"), 1);
    run.onFrame(frame("Kernel.Stopped"), 2);
    expect(run.onFrame(frame("Kernel.Stopped"), 3)).toEqual([]);
  });

  it("closes an open generation when the workload ends, and only then", () => {
    const run = new RunProjection("web", "initial");
    expect(run.onWorkloadEnded({ reason: "gone" }, 0)).toEqual([]);
    run.onFrame(frame("Kernel.Starting"), 10);
    expect(run.onWorkloadEnded({ code: 3 }, 30)).toEqual([{ type: "run", app: "web", generation: 1, phase: "completed", code: 3, durationMs: 20 }]);
    run.onFrame(frame("Kernel.Starting"), 40);
    expect(run.onWorkloadEnded({ code: 1, reason: "application container exited (code 1)" }, 50)).toEqual([
      { type: "run", app: "web", generation: 2, phase: "failed", reason: "application container exited (code 1)" },
    ]);
    run.onFrame(frame("Kernel.Starting"), 60);
    expect(run.onWorkloadEnded({}, 70)).toEqual([{ type: "run", app: "web", generation: 3, phase: "failed", reason: "workload ended" }]);
    expect(run.onWorkloadEnded({}, 80)).toEqual([]);
  });
});
