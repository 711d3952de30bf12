/**
 * The run projection (docs/api.md "Run outcomes"): per-app generations derived from the kernel's
 * lifecycle frames on the debug stream. Each generation gets exactly one `started` and at
 * most one terminal event (`completed` or `failed`); the reference's re-emission quirks are
 * deliberately not reproduced (docs/decisions.md "Sessions and streams").
 */
import * as v from "valibot";
import type { DebugFrame, RunEvent, RunTrigger } from "../contract/wire.ts";

/** How a workload ended under a run: an exit code, or a reason it failed. */
export const RunOutcomeSchema = v.object({ code: v.optional(v.number()), reason: v.optional(v.string()) });
export type RunOutcome = v.InferOutput<typeof RunOutcomeSchema>;

export class RunProjection {
  generation = 0;
  #openSince: number | undefined;
  #pendingTrigger: RunTrigger | undefined;

  constructor(
    readonly app: string,
    initialTrigger: RunTrigger | undefined,
  ) {
    this.#pendingTrigger = initialTrigger;
  }

  /** Attributes the app's next generation (creation, reload, app change, resume). */
  setNextTrigger(trigger: RunTrigger): void {
    this.#pendingTrigger = trigger;
  }

  onFrame(frame: DebugFrame, now: number): RunEvent[] {
    const payload = (frame.payload ?? {}) as Record<string, unknown>;
    switch (frame.event) {
      case "Kernel.Starting":
        // The kernel's own word for its version, passed on as it said it (the client judges).
        return this.#open(now, nonEmptyString(payload.version));
      case "Kernel.Stopped": {
        if (this.#openSince === undefined) return [];
        const code = typeof payload.exitCode === "number" ? payload.exitCode : 0;
        return [this.#close({ phase: "completed", code, durationMs: now - this.#openSince })];
      }
      case "Kernel.RunFailed": {
        const reason = nonEmptyString(payload.code) ?? nonEmptyString(payload.message) ?? "run failed";
        return [...this.#open(now), this.#close({ phase: "failed", reason })];
      }
      default:
        return [];
    }
  }

  /** The workload ended without a kernel event closing the open generation. */
  onWorkloadEnded(outcome: RunOutcome, now: number): RunEvent[] {
    if (this.#openSince === undefined) return [];
    if (outcome.code !== undefined && outcome.reason === undefined) {
      return [this.#close({ phase: "completed", code: outcome.code, durationMs: now - this.#openSince })];
    }
    return [this.#close({ phase: "failed", reason: outcome.reason ?? "workload ended" })];
  }

  #open(now: number, telo?: string): RunEvent[] {
    if (this.#openSince !== undefined) return [];
    this.generation += 1;
    this.#openSince = now;
    const trigger = this.#pendingTrigger ?? "watch";
    this.#pendingTrigger = undefined;
    return [{ type: "run", app: this.app, generation: this.generation, phase: "started", trigger, ...(telo !== undefined && { telo }) }];
  }

  #close(
    end: { phase: "completed"; code: number; durationMs: number } | { phase: "failed"; reason: string },
  ): RunEvent {
    this.#openSince = undefined;
    return { type: "run", app: this.app, generation: this.generation, ...end };
  }
}

function nonEmptyString(value: unknown): string | undefined {
  return typeof value === "string" && value !== "" ? value : undefined;
}
