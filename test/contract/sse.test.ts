import { describe, expect, it } from "vitest";
import { SseParser } from "../../src/contract/sse.ts";

/** Feeds `text` in pieces cut at every `step` characters and collects every event. */
function parseInPieces(text: string, step: number, parser = new SseParser()) {
  const messages = [];
  for (let offset = 0; offset < text.length; offset += step) messages.push(...parser.push(text.slice(offset, offset + step)));
  return messages;
}

describe("SseParser", () => {
  const stream = "id: 1\nevent: status\ndata: {\"a\":1}\n\n: heartbeat\n\nevent: gap\ndata: x\ndata: y\n\n";
  const expected = [
    { id: "1", event: "status", data: '{"a":1}' },
    { id: undefined, event: "gap", data: "x\ny" },
  ];

  it("parses LF, CRLF and CR line ends alike, however the chunks fall", () => {
    for (const ending of ["\n", "\r\n", "\r"]) {
      const text = stream.replaceAll("\n", ending);
      for (const step of [1, 2, 3, 7, text.length]) expect(parseInPieces(text, step)).toEqual(expected);
    }
  });

  it("keeps a CRLF split across two chunks as one line end", () => {
    const parser = new SseParser();
    expect(parser.push("data: a\r")).toEqual([]);
    expect(parser.push("\n\r")).toEqual([{ id: undefined, event: "message", data: "a" }]);
    expect(parser.push("\ndata: b\n\n")).toEqual([{ id: undefined, event: "message", data: "b" }]);
  });

  it("drops one leading space in standard mode, all leading whitespace in trimStart mode", () => {
    expect(new SseParser().push("data:  two\n\n")[0]?.data).toBe(" two");
    expect(new SseParser({ valueStart: "trimStart" }).push("data:  two\n\n")[0]?.data).toBe("two");
  });

  it("does not dispatch an event without data, and ignores ids holding NUL", () => {
    expect(new SseParser().push("id: 4\nevent: x\n\n")).toEqual([]);
    expect(new SseParser().push("id: a\0b\ndata: d\n\n")).toEqual([{ id: undefined, event: "message", data: "d" }]);
  });

  it("drops, and counts, an event with a line over the bound without holding the line", () => {
    const parser = new SseParser({ maxEventChars: 10 });
    const long = `data: ${"z".repeat(50)}`;
    const messages = parseInPieces(`${long}\ndata: more\n\ndata: ok\n\n`, 4, parser);
    expect(messages).toEqual([{ id: undefined, event: "message", data: "ok" }]);
    expect(parser.dropped).toBe(1);
  });

  it("drops, and counts, an event whose data lines together go over the bound", () => {
    const parser = new SseParser({ maxEventChars: 10 });
    const messages = parser.push(`${"data: abc\n".repeat(20)}\ndata: ok\n\n`);
    expect(messages).toEqual([{ id: undefined, event: "message", data: "ok" }]);
    expect(parser.dropped).toBe(1);
  });
});
