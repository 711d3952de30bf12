/**
 * The stream-id ceilings of owned sessions (src/supervisor/stream-ceilings.ts): a pass saves a new
 * ceiling only for a session whose ids came within half the reserve of the saved one (or whose
 * last save failed), nothing in the steady state, and a failed save is tried again next pass.
 */
import { describe, expect, it } from "vitest";
import { createLogger } from "../../src/log.ts";
import type { Workload } from "../../src/sessions/backend-seam.ts";
import { Registry } from "../../src/sessions/registry.ts";
import { Session } from "../../src/sessions/session.ts";
import { RESERVE, type StreamIds } from "../../src/sessions/stream-marks.ts";
import { StreamCeilings } from "../../src/supervisor/stream-ceilings.ts";

function owned(registry: Registry, saves: StreamIds[], fail: { next: boolean }): Session {
  const session = new Session({
    launch: {
      sessionId: `ceiling${registry.size}`,
      createdAt: new Date().toISOString(),
      mode: "run",
      apps: [{ name: "app", entryRelativePath: "telo.yaml", ports: [], io: "tty" }],
      env: {},
      config: {},
      bundle: { entryRelativePath: "telo.yaml", files: [] },
      inspect: false,
      selfContained: false,
    },
    agent: undefined,
    replayBufferBytes: 1_000_000,
    reloadLimit: 30,
    now: new Date(),
    firstStreamId: 1_000,
  });
  const workload: Workload = {
    done: new Promise(() => undefined),
    writeStdin: () => undefined,
    resize: () => undefined,
    stop: async () => undefined,
    saveCeiling: async (ceiling) => {
      if (fail.next) {
        fail.next = false;
        throw new Error("apiserver down");
      }
      saves.push(ceiling);
    },
  };
  session.attachWorkload(workload);
  registry.restore(session);
  return session;
}

describe("StreamCeilings", () => {
  const log = createLogger("test", "silent");

  it("saves nothing while the ids stay well below the saved ceiling, and a new one once they near it", async () => {
    const registry = new Registry({ maxSessions: 10, exitTtlMs: 1_000, suspendedTtlMs: 1_000 });
    const ceilings = new StreamCeilings(registry, log);
    const saves: StreamIds[] = [];
    const session = owned(registry, saves, { next: false });
    ceilings.adopted(session, { events: 999 + RESERVE, apps: { app: 999 + RESERVE } }, true);
    session.pushOutput("app", Buffer.from("x"), "tty");
    await ceilings.pass();
    expect(saves).toEqual([]);
    // The ids pass half the reserve below the ceiling: a new ceiling, the reserve above them.
    ceilings.adopted(session, { events: 999 + RESERVE, apps: { app: 999 + RESERVE / 2 } }, true);
    await ceilings.pass();
    expect(saves).toEqual([{ events: 999 + RESERVE, apps: { app: 1_000 + RESERVE } }]);
    await ceilings.pass();
    expect(saves).toHaveLength(1);
  });

  it("tries a failed save again on the next pass, and never writes for a session it admitted itself", async () => {
    const registry = new Registry({ maxSessions: 10, exitTtlMs: 1_000, suspendedTtlMs: 1_000 });
    const ceilings = new StreamCeilings(registry, log);
    const saves: StreamIds[] = [];
    const fail = { next: true };
    const adopted = owned(registry, saves, fail);
    ceilings.adopted(adopted, { events: 999 + RESERVE, apps: { app: 999 + RESERVE } }, false);
    owned(registry, saves, { next: false });
    await ceilings.pass();
    expect(saves).toEqual([]);
    await ceilings.pass();
    expect(saves).toEqual([{ events: 999 + RESERVE, apps: { app: 999 + RESERVE } }]);
  });
});
