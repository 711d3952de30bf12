import { describe, expect, it } from "vitest";
import { ReplayRing } from "../../src/sessions/replay-ring.ts";

describe("ReplayRing", () => {
  it("numbers entries from 1 and evicts the oldest past the byte cap", () => {
    const ring = new ReplayRing<string>(10);
    expect(ring.push("aaaa", 4)).toBe(1);
    expect(ring.push("bbbb", 4)).toBe(2);
    expect(ring.push("cccc", 4)).toBe(3);
    expect(ring.oldestId).toBe(2);
    expect(ring.get(1)).toBeUndefined();
    expect(ring.get(3)).toBe("cccc");
    expect(ring.nextId).toBe(4);
  });

  it("keeps the newest entry even when it alone exceeds the cap", () => {
    const ring = new ReplayRing<string>(10);
    ring.push("a", 1);
    expect(ring.push("huge", 50)).toBe(2);
    expect(ring.oldestId).toBe(2);
    expect(ring.get(2)).toBe("huge");
  });

  it("reports a gap only when entries after the cursor were evicted", () => {
    const ring = new ReplayRing<string>(8);
    for (let i = 0; i < 5; i += 1) ring.push(`e${i}`, 4);
    expect(ring.oldestId).toBe(4);
    expect(ring.hasGapAfter(3)).toBe(false);
    expect(ring.hasGapAfter(2)).toBe(true);
    expect(new ReplayRing<string>(8).hasGapAfter(0)).toBe(false);
  });

  it("never reuses ids across many evictions and compactions", () => {
    const ring = new ReplayRing<number>(100);
    for (let i = 1; i <= 10_000; i += 1) expect(ring.push(i, 10)).toBe(i);
    expect(ring.oldestId).toBe(9_991);
    expect(ring.get(10_000)).toBe(10_000);
    expect(ring.retainedBytes).toBe(100);
  });
});
