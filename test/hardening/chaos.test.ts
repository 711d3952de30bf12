/**
 * The chaos run (docs/testing.md "The chaos and load runs") at the size `npm test` affords: 24 sessions with every fault knob on,
 * one supervisor SIGKILL and one api restart, on fixed seeds so that every run of the suite
 * replays the same plans (the full run, on fresh seeds, is chaos.soak.ts). See chaos-run.ts for
 * what it checks; states and counts only, so a loaded machine only takes longer.
 */
import { describe, it } from "vitest";
import { runChaos } from "./chaos-run.ts";

/**
 * 1053142478 is the seed that found re-adopted sessions stuck in `starting` (a pod whose delete
 * failed, then a supervisor kill); the other was drawn once and kept.
 */
const SEEDS = [1053142478, 1999231];
const SESSIONS = 24;

describe("chaos run, reduced size", () => {
  for (const seed of SEEDS) {
    it(`ends every session consistently and leaves nothing behind (seed ${seed}, ${SESSIONS} sessions)`, () =>
      runChaos({ seed, sessions: SESSIONS, supervisorKills: 1 }), 300_000);
  }
});
