// Terminal output and the pod log compared with their line ends unified (line-ends.ts).
import { describe, expect, it } from "vitest";
import { unifyLineEnds } from "../../../src/kube/session/line-ends.ts";

describe("line ends unified", () => {
  it("leaves out every run of CRs that ends a line, keeps a CR inside one, and maps offsets back", () => {
    const given = Buffer.from("ready\r\r\n10%\r20%\r\ntail\r");
    const unified = unifyLineEnds(given);
    expect(unified.bytes.toString()).toBe("ready\n10%\r20%\ntail");
    // "\n" after "ready" is byte 7 given; "1" of "10%" is byte 8; the end maps to the end.
    expect(unified.origin(5)).toBe(7);
    expect(unified.origin(6)).toBe(8);
    expect(unified.origin(unified.bytes.byteLength)).toBe(given.byteLength);
    expect(unifyLineEnds(Buffer.from("no carriage returns\n")).bytes.toString()).toBe("no carriage returns\n");
  });

  it("makes what a terminal showed and what either kind of runtime logged the same", () => {
    const shown = unifyLineEnds(Buffer.from("ready\r\r\nline\r\n")).bytes;
    expect(unifyLineEnds(Buffer.from("ready\r\nline\n")).bytes).toEqual(shown);
    expect(unifyLineEnds(Buffer.from("ready\r\r\nline\r\n")).bytes).toEqual(shown);
  });
});
