/**
 * The simulated kubelet's container log (src/sim/logbuffer.ts): bounded by bytes, oldest dropped,
 * and linear in the number of entries (a shift per dropped entry once made a full buffer of
 * 1-byte tty frames quadratic).
 */
import { describe, expect, it } from "vitest";
import { LogBuffer } from "../../src/sim/logbuffer.ts";

const text = (buffer: LogBuffer) => Buffer.concat(buffer.snapshot().map((entry) => entry.data)).toString();

describe("LogBuffer", () => {
  it("keeps the newest entries within its byte bound, dropping the oldest whole", () => {
    const buffer = new LogBuffer(10);
    for (const chunk of ["aaaa", "bbbb", "cccc", "dd"]) buffer.append("stdout", Buffer.from(chunk));
    expect(text(buffer)).toBe("bbbbccccdd");
    buffer.append("stderr", Buffer.from("e"));
    expect(text(buffer)).toBe("ccccdde");
    expect(buffer.snapshot().map((entry) => entry.stream)).toEqual(["stdout", "stdout", "stderr"]);
  });

  it("keeps one entry larger than the bound, the newest", () => {
    const buffer = new LogBuffer(4);
    buffer.append("stdout", Buffer.from("ab"));
    buffer.append("stdout", Buffer.from("0123456789"));
    expect(text(buffer)).toBe("0123456789");
  });

  it("tells followers every entry, then the end", () => {
    const buffer = new LogBuffer(2);
    const seen: (string | null)[] = [];
    buffer.follow((entry) => seen.push(entry && entry.data.toString()));
    for (const chunk of ["a", "b", "c"]) buffer.append("stdout", Buffer.from(chunk));
    buffer.end();
    expect(seen).toEqual(["a", "b", "c", null]);
    const late: (string | null)[] = [];
    buffer.follow((entry) => late.push(entry && entry.data.toString()));
    expect(late).toEqual([null]);
  });

  // Not a timed assertion: a million 1-byte frames through a full half-megabyte buffer take well
  // under a second when each drop is O(1); a shift per drop moves ~2.5·10^11 array slots,
  // which cannot finish within the test timeout on any machine.
  it("drops the oldest of a million 1-byte frames one by one and stays correct", () => {
    const bound = 500_000;
    const buffer = new LogBuffer(bound);
    const bytes = [..."0123456789"].map((digit) => Buffer.from(digit));
    for (let index = 0; index < 1_000_000; index += 1) buffer.append("stdout", bytes[index % 10]!);
    const kept = buffer.snapshot();
    expect(kept.length).toBe(bound);
    // The newest half million, in order: the last frame is 999,999's digit, the first 500,000's.
    expect(kept[0]!.data.toString()).toBe("0");
    expect(kept.at(-1)!.data.toString()).toBe("9");
    expect(kept.every((entry, offset) => entry.data.toString() === String(offset % 10))).toBe(true);
  });
});
