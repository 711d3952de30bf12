/**
 * The full chaos run (docs/testing.md "The chaos and load runs") of `npm run test:soak`: 200 sessions (CHAOS_SESSIONS), the
 * supervisor SIGKILLed twice and the api restarted, on a fresh seed each time (printed in the
 * test's name; CHAOS_SEED=<seed> replays it). See chaos-run.ts for what it checks.
 */
import { describe, it } from "vitest";
import { runChaos, seedFromEnv } from "./chaos-run.ts";

const sessions = Number(process.env.CHAOS_SESSIONS ?? 200);
const seed = seedFromEnv();

describe("chaos run, full size", () => {
  it(`ends every session consistently and leaves nothing behind (seed ${seed}, ${sessions} sessions; replay with CHAOS_SEED=${seed})`, () =>
    runChaos({ seed, sessions, supervisorKills: 2 }), 900_000);
});
