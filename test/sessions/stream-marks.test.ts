/**
 * Stream ids across owners (src/sessions/stream-marks.ts): a successor never hands out an id a
 * client may hold from an earlier owner, and continues without a gap only after an exact
 * handover of an app whose output position is known.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { RESERVE, adoptionCeiling, ceilingOf, firstIdsAfter, needsNewCeiling } from "../../src/sessions/stream-marks.ts";

const FLOOR = 90_000_000;

describe("stream ids across owners", () => {
  it("continues after an exact handover, and opens a gap for an app it cannot continue", () => {
    const first = firstIdsAfter({ exact: true, ids: { events: 41, apps: { web: 900, worker: 7 } }, continues: new Set(["web"]) }, FLOOR);
    expect(first.events).toBe(42);
    expect(first.app("web")).toBe(901);
    expect(first.app("worker")).toBe(9);
    expect(first.app("added-later")).toBe(FLOOR);
  });

  it("starts past the ceiling and the floor after a crash, and at the floor with nothing saved", () => {
    const low = firstIdsAfter({ exact: false, ids: { events: 10, apps: { web: 20 } }, continues: new Set() }, FLOOR);
    expect([low.events, low.app("web")]).toEqual([FLOOR, FLOOR]);
    const high = firstIdsAfter({ exact: false, ids: { events: FLOOR + 5, apps: { web: FLOOR + 9 } }, continues: new Set() }, FLOOR);
    expect([high.events, high.app("web")]).toEqual([FLOOR + 6, FLOOR + 10]);
    const none = firstIdsAfter(undefined, FLOOR);
    expect([none.events, none.app("web")]).toEqual([FLOOR, FLOOR]);
  });

  it("claims, on adopting, its first ids plus the reserve for the events and every app of the session", () => {
    const first = firstIdsAfter({ exact: true, ids: { events: 41, apps: { web: 900 } }, continues: new Set(["web"]) }, FLOOR);
    expect(adoptionCeiling(first, ["web", "added-later"])).toEqual({ events: 41 + RESERVE, apps: { web: 900 + RESERVE, "added-later": FLOOR - 1 + RESERVE } });
    // Nothing it hands out before its next save reaches the ceiling it claimed.
    expect(needsNewCeiling({ events: 42, apps: { web: 901, "added-later": FLOOR } }, adoptionCeiling(first, ["web", "added-later"]))).toBe(false);
  });

  it("asks for a new ceiling once an id is within half the reserve of it, or an app has none", () => {
    const ceiling = ceilingOf({ events: 0, apps: { web: 0 } });
    expect(ceiling).toEqual({ events: RESERVE, apps: { web: RESERVE } });
    expect(needsNewCeiling({ events: RESERVE / 2, apps: { web: 3 } }, ceiling)).toBe(false);
    expect(needsNewCeiling({ events: RESERVE / 2 + 1, apps: { web: 3 } }, ceiling)).toBe(true);
    expect(needsNewCeiling({ events: 1, apps: { web: RESERVE / 2 + 1 } }, ceiling)).toBe(true);
    expect(needsNewCeiling({ events: 1, apps: { other: 1 } }, ceiling)).toBe(true);
  });

  it("never hands out an id an owner below its saved ceiling may have handed out", () => {
    fc.assert(
      fc.property(fc.nat({ max: 2 ** 31 }), fc.nat({ max: RESERVE / 2 }), fc.nat({ max: 2 ** 31 }), (saved, used, floor) => {
        // The owner saved `saved`'s ceiling, then handed out up to `used` more ids before it died
        // (it saves a new ceiling before it gets within half the reserve).
        const ceiling = ceilingOf({ events: saved, apps: { web: saved } });
        const first = firstIdsAfter({ exact: false, ids: ceiling, continues: new Set() }, floor);
        expect(first.events).toBeGreaterThan(saved + used);
        expect(first.app("web")).toBeGreaterThan(saved + used);
      }),
    );
  });
});
