import { describe, expect, it } from "vitest";
import { overlapLength } from "../../../src/kube/session/overlap.ts";

const b = (text: string) => Buffer.from(text);

describe("overlapLength", () => {
  it("finds the live bytes the log already holds", () => {
    expect(overlapLength(b("booting\r\nready\r\n"), b("ready\r\n> "))).toBe("ready\r\n".length);
    expect(overlapLength(b("abc"), b("abc"))).toBe(3);
  });

  it("is 0 when the two do not meet", () => {
    expect(overlapLength(b("booting\r\n"), b("> "))).toBe(0);
    expect(overlapLength(b(""), b("x"))).toBe(0);
    expect(overlapLength(b("x"), b(""))).toBe(0);
  });
});
