import { describe, expect, it } from "vitest";
import { LiveAfterLog, liveStart, overlapLength } from "../../../src/kube/session/overlap.ts";

const b = (text: string) => Buffer.from(text);

describe("overlapLength", () => {
  it("finds the live bytes the log already holds", () => {
    expect(overlapLength(b("booting\r\nready\r\n"), b("ready\r\n> "))).toBe("ready\r\n".length);
    expect(overlapLength(b("abc"), b("abc"))).toBe(3);
  });

  it("meets a line the app ended with CR LF: CR CR LF on the attach, CR LF in containerd's log", () => {
    expect(overlapLength(b("booting\r\nready\r\n"), b("ready\r\r\n> "))).toBe("ready\r\r\n".length);
  });

  it("is 0 when the two do not meet", () => {
    expect(overlapLength(b("booting\r\n"), b("> "))).toBe(0);
    expect(overlapLength(b(""), b("x"))).toBe(0);
    expect(overlapLength(b("x"), b(""))).toBe(0);
  });
});

const ticks = (from: number, to: number) => b(Array.from({ length: to - from + 1 }, (_, i) => `tick ${from + i}\r\n`).join(""));

describe("liveStart", () => {
  it("places the attach's first bytes in a log that holds lines the attach never delivered", () => {
    expect(liveStart(ticks(1, 2), ticks(2, 2))).toBe(ticks(1, 1).byteLength);
    // The log ahead of the attach: it begins well before the log's end.
    expect(liveStart(ticks(1, 9), ticks(3, 4))).toBe(ticks(1, 2).byteLength);
    // The log ends inside the attach's bytes.
    expect(liveStart(ticks(1, 5), ticks(4, 8))).toBe(ticks(1, 3).byteLength);
    expect(liveStart(b("tick 1\r\ntick 2\r"), ticks(2, 3))).toBe(ticks(1, 1).byteLength);
  });

  it("places them past a line the app ended with CR LF, whichever way the log kept its CRs", () => {
    expect(liveStart(b("ready\r\ntick 1\r\n"), b("ready\r\r\ntick 1\r\n"))).toBe(0);
    expect(liveStart(b("booting\r\nready\r\n"), b("ready\r\r\n"))).toBe("booting\r\n".length);
  });

  it("is undefined for a log that does not hold them yet, or for nothing delivered", () => {
    expect(liveStart(ticks(1, 1), ticks(3, 3))).toBeUndefined();
    expect(liveStart(b(""), ticks(1, 1))).toBeUndefined();
    expect(liveStart(ticks(1, 3), b(""))).toBeUndefined();
  });

  it("prefers the place matching most bytes, then the latest: repeating a line rather than losing one", () => {
    // "$ " alone matches twice: the later place, so "$ B" is shown from the log rather than lost.
    expect(liveStart(b("A$ B$ "), b("$ "))).toBe(4);
    // More bytes tell the first place apart.
    expect(liveStart(b("A$ B$ "), b("$ B$ C"))).toBe(1);
  });

  it("in output that is all one byte, takes the latest place that matches its whole probe (4 KiB)", () => {
    const log = Buffer.alloc(4 * 1024 * 1024, "a");
    expect(liveStart(log, Buffer.alloc(8 * 1024, "a"))).toBe(log.byteLength - 4 * 1024);
  });
});

describe("LiveAfterLog", () => {
  it("lets through only what lies past the log's end when the attach overlaps it", () => {
    const join = new LiveAfterLog(ticks(1, 5));
    expect(join.add(ticks(4, 7)).toString()).toBe(ticks(6, 7).toString());
    expect(join.done).toBe(true);
    expect(join.add(ticks(8, 8)).toString()).toBe(ticks(8, 8).toString());
  });

  it("withholds an attach that lags the log until it reaches the log's end", () => {
    const join = new LiveAfterLog(ticks(1, 9));
    expect(join.add(ticks(3, 4)).byteLength).toBe(0);
    expect(join.add(ticks(5, 7)).byteLength).toBe(0);
    expect(join.done).toBe(false);
    expect(join.add(ticks(8, 11)).toString()).toBe(ticks(10, 11).toString());
    expect(join.done).toBe(true);
  });

  it("lets new output through at once, and what it withheld when told to give up", () => {
    expect(new LiveAfterLog(ticks(1, 3)).add(b("> ")).toString()).toBe("> ");
    expect(new LiveAfterLog(b("")).add(b("x")).toString()).toBe("x");
    const join = new LiveAfterLog(b("ready\r\n$ ls\r\nready\r\n$ "));
    // A prompt printed again is in the log already, short of its end: withheld, then given up on.
    expect(join.add(b("ready\r\n")).byteLength).toBe(0);
    expect(join.giveUp().toString()).toBe("ready\r\n");
  });
});
