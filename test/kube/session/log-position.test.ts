/**
 * Positions in a container's log read with timestamps (src/kube/session/log-position.ts): what a
 * handing-over replica saves and where its successor's terminal continues. The property: for
 * any output written in chunks (several sharing a timestamp, lines left open and completed
 * later), cut anywhere after a tail that occurs once, the successor's bytes are exactly the rest.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { asShownByTerminal, bytesAfter, parseStampedLog, positionAfter, secondsSince, stampNanos } from "../../../src/kube/session/log-position.ts";

/** Renders chunks as the kubelet's log reader does with timestamps: one prefix per line, at its first chunk. */
function stampedLog(chunks: { at: string; text: string }[]): Buffer {
  let out = "";
  let atLineStart = true;
  for (const { at, text } of chunks) {
    for (const part of text.split(/(?<=\n)/)) {
      if (part === "") continue;
      out += atLineStart ? `${at} ${part}` : part;
      atLineStart = part.endsWith("\n");
    }
  }
  return Buffer.from(out);
}

const stamp = (second: number, nanos: number) => `2026-12-02T03:00:${String(second).padStart(2, "0")}.${String(nanos).padStart(9, "0")}Z`;

describe("log positions", () => {
  it("parses RFC 3339 stamps to nanoseconds, offsets included, and refuses other text", () => {
    expect(stampNanos("2026-12-02T03:00:00.000000001Z")).toBe(BigInt(Date.UTC(2026, 11, 2, 3)) * 1_000_000n + 1n);
    expect(stampNanos("2026-12-02T04:00:00.5+01:00")).toBe(BigInt(Date.UTC(2026, 11, 2, 3)) * 1_000_000n + 500_000_000n);
    expect(stampNanos("2026-12-02T03:00:00Z")).toBe(BigInt(Date.UTC(2026, 11, 2, 3)) * 1_000_000n);
    expect(stampNanos("yesterday")).toBeUndefined();
    expect(stampNanos("2026-12-02T03:00:00.1234567890Z")).toBeUndefined();
  });

  it("stops reading at a line that is not stamped (a log read without timestamps)", () => {
    expect(parseStampedLog(Buffer.from("tick 1\ntick 2\n"))).toEqual([]);
    const lines = parseStampedLog(Buffer.from(`${stamp(1, 0)} a\n${stamp(2, 0)} b`));
    expect(lines.map((line) => line.text.toString())).toEqual(["a\n", "b"]);
  });

  it("continues a counter exactly after the last line shown, a line completed later included", () => {
    const log = stampedLog([
      { at: stamp(1, 0), text: "tick 1\r\ntick 2\r\n" },
      { at: stamp(2, 0), text: "tick 3\r\ntick " },
      { at: stamp(2, 500), text: "4\r\n" },
      { at: stamp(3, 0), text: "tick 5\r\n" },
    ]);
    const lines = parseStampedLog(log);
    const position = positionAfter(lines, Buffer.from("tick 2\r\ntick 3\r\ntick"));
    expect(position).toEqual({ at: stamp(2, 0), skip: "tick 3\r\ntick".length });
    expect(bytesAfter(lines, position!).toString()).toBe(" 4\r\ntick 5\r\n");
  });

  it("knows no position for bytes that occur twice or not at all", () => {
    const lines = parseStampedLog(stampedLog([{ at: stamp(1, 0), text: "x\r\nx\r\nx\r\n" }]));
    expect(positionAfter(lines, Buffer.from("x\r\n"))).toBeUndefined();
    expect(positionAfter(lines, Buffer.from("y"))).toBeUndefined();
    expect(positionAfter(lines, Buffer.alloc(0))).toBeUndefined();
  });

  it("reads back whole seconds to the position, with the margin", () => {
    const now = Date.UTC(2026, 11, 2, 3, 0, 10, 300);
    expect(secondsSince({ at: stamp(0, 0), skip: 0 }, now, 5)).toBe(16);
    expect(secondsSince({ at: stamp(10, 0), skip: 0 }, now, 0)).toBe(1);
  });

  it("hands over anywhere: the successor's bytes are exactly what the log holds after the shown ones", () => {
    const chunk = fc.record({ second: fc.integer({ min: 0, max: 5 }), text: fc.stringMatching(/^[a-z \n]{1,12}$/) });
    fc.assert(
      fc.property(fc.array(chunk, { minLength: 1, maxLength: 30 }), fc.nat(), fc.integer({ min: 1, max: 24 }), (raw, cutSeed, tailLength) => {
        // A counter makes every line unique; timestamps never go back, and several chunks share one.
        let counter = 0;
        let second = 0;
        const chunks = raw.map(({ second: step, text }) => {
          second = Math.min(59, second + (step % 2));
          return { at: stamp(second, 0), text: text.replace(/\n/g, () => ` ${(counter += 1)}\n`) };
        });
        const content = Buffer.from(chunks.map((c) => c.text).join(""));
        const cut = 1 + (cutSeed % content.byteLength);
        const shown = content.subarray(Math.max(0, cut - tailLength), cut);
        const lines = parseStampedLog(stampedLog(chunks));
        const position = positionAfter(lines, shown);
        const unique = content.indexOf(shown) === content.lastIndexOf(shown);
        if (!unique) {
          expect(position).toBeUndefined();
          return;
        }
        expect(position).toBeDefined();
        expect(bytesAfter(lines, position!).toString()).toBe(content.subarray(cut).toString());
      }),
      { numRuns: 500 },
    );
  });

  it("puts back the CR a terminal showed before each LF, which containerd's log writer drops, and leaves a log that kept it", () => {
    expect(asShownByTerminal(Buffer.from("tick 1\ntick 2\n")).toString()).toBe("tick 1\r\ntick 2\r\n");
    expect(asShownByTerminal(Buffer.from("\nopen line")).toString()).toBe("\r\nopen line");
    expect(asShownByTerminal(Buffer.from("kept\r\nbare\n")).toString()).toBe("kept\r\nbare\r\n");
    const kept = Buffer.from("a\r\nb\r\n");
    expect(asShownByTerminal(kept)).toBe(kept);
  });

  it("finds what a terminal showed (CR LF) in a log that stores LF, once its lines are as the terminal showed them", () => {
    const log = Buffer.from(["2026-12-02T04:15:43.1Z tick 3\n", "2026-12-02T04:15:43.2Z tick 4\n", "2026-12-02T04:15:43.3Z tick 5\n"].join(""));
    const lines = parseStampedLog(log).map((line) => ({ ...line, text: asShownByTerminal(line.text) }));
    const position = positionAfter(lines, Buffer.from("tick 3\r\ntick 4\r\n"));
    expect(position).toEqual({ at: "2026-12-02T04:15:43.2Z", skip: 8 });
    expect(bytesAfter(lines, position!).toString()).toBe("tick 5\r\n");
    // Counted in the lines as given: the log's own lines (LF) are found too, their skip in their bytes.
    expect(positionAfter(parseStampedLog(log), Buffer.from("tick 3\r\ntick 4\r\n"))).toEqual({ at: "2026-12-02T04:15:43.2Z", skip: 7 });
  });

  it("finds a line the app ended with CR LF: the terminal shows CR CR LF, containerd's log keeps CR LF", () => {
    const log = Buffer.from(["2026-12-02T04:15:43.1Z ready\r\n", "2026-12-02T04:15:43.2Z tick 1\n", "2026-12-02T04:15:43.3Z tick 2\n"].join(""));
    const lines = parseStampedLog(log).map((line) => ({ ...line, text: asShownByTerminal(line.text) }));
    const position = positionAfter(lines, Buffer.from("ready\r\r\ntick 1\r\n"));
    expect(position).toEqual({ at: "2026-12-02T04:15:43.2Z", skip: 8 });
    expect(bytesAfter(lines, position!).toString()).toBe("tick 2\r\n");
    // Shown up to the line's CRs only: the successor starts at its end, which shows the same.
    const early = positionAfter(lines, Buffer.from("ready\r"));
    expect(early).toEqual({ at: "2026-12-02T04:15:43.1Z", skip: 5 });
    expect(bytesAfter(lines, early!).toString()).toBe("\r\ntick 1\r\ntick 2\r\n");
  });
});
