/**
 * The simulated tty's line discipline stays linear in its input: a megabyte of
 * stdin without a newline once became a million one-byte echo chunks, each a log entry and a
 * WebSocket frame, and wedged the process that ran the simulator.
 */
import { describe, expect, it } from "vitest";
import { LineDiscipline } from "../../src/sim/tty.ts";

function recorder() {
  const out = { echoes: [] as Buffer[], lines: [] as string[], signals: [] as string[], eofs: 0 };
  const discipline = new LineDiscipline({
    echo: (bytes) => out.echoes.push(bytes),
    line: (bytes) => out.lines.push(bytes.toString()),
    signal: (name) => out.signals.push(name),
    eof: () => (out.eofs += 1),
  });
  return { out, discipline };
}

describe("simulated tty line discipline", () => {
  it("echoes a megabyte typed without a newline as one chunk, and hands it over as one line", () => {
    const { out, discipline } = recorder();
    const megabyte = Buffer.alloc(1024 * 1024, "x");
    discipline.input(megabyte);
    expect(out.echoes).toHaveLength(1);
    expect(out.echoes[0]!.equals(megabyte)).toBe(true);
    discipline.input(Buffer.from("\r"));
    expect(out.lines).toHaveLength(1);
    expect(out.lines[0]!.length).toBe(megabyte.length + 1);
  });

  it("keeps the echo before the line, and edits as a terminal does", () => {
    const { out, discipline } = recorder();
    const events: string[] = [];
    const ordered = new LineDiscipline({
      echo: (bytes) => events.push(`echo:${JSON.stringify(bytes.toString())}`),
      line: (bytes) => events.push(`line:${JSON.stringify(bytes.toString())}`),
      signal: (name) => events.push(name),
      eof: () => events.push("eof"),
    });
    ordered.input(Buffer.from("abx\x7fc\rzz\x15q\x01\x03"));
    expect(events).toEqual([
      `echo:${JSON.stringify("abx\b \bc\r\n")}`,
      `line:${JSON.stringify("abc\n")}`,
      `echo:${JSON.stringify("zz\b \b\b \bq^A^C\r\n")}`,
      "SIGINT",
    ]);
    discipline.input(Buffer.from("partial\x04"));
    expect(out.lines).toEqual(["partial"]);
    discipline.input(Buffer.from("\x04"));
    expect(out.eofs).toBe(1);
  });
});
