/**
 * The attach output joiner (src/kube/session/output-joiner.ts): what arrives in one synchronous
 * pass leaves as one chunk per run of a stream, every byte in order, once the pass is over.
 */
import { describe, expect, it } from "vitest";
import { OutputJoiner, type OutputStream } from "../../../src/kube/session/output-joiner.ts";

function collector() {
  const delivered: { text: string; stream: OutputStream }[] = [];
  const joiner = new OutputJoiner((bytes, stream) => delivered.push({ text: bytes.toString(), stream }));
  return { delivered, joiner };
}

const nextTick = () => new Promise<void>((resolve) => process.nextTick(resolve));

describe("OutputJoiner", () => {
  it("hands on one pass's chunks as one, in order, once the pass is over", async () => {
    const { delivered, joiner } = collector();
    for (const text of ["a", "bc", "", "def"]) joiner.add(Buffer.from(text), "stdout");
    expect(delivered).toEqual([]);
    await nextTick();
    expect(delivered).toEqual([{ text: "abcdef", stream: "stdout" }]);
  });

  it("keeps stdout and stderr apart and in their order", async () => {
    const { delivered, joiner } = collector();
    joiner.add(Buffer.from("out1 "), "stdout");
    joiner.add(Buffer.from("out2 "), "stdout");
    joiner.add(Buffer.from("err1 "), "stderr");
    joiner.add(Buffer.from("out3"), "stdout");
    await nextTick();
    expect(delivered).toEqual([
      { text: "out1 out2 ", stream: "stdout" },
      { text: "err1 ", stream: "stderr" },
      { text: "out3", stream: "stdout" },
    ]);
  });

  it("hands on each pass by itself", async () => {
    const { delivered, joiner } = collector();
    joiner.add(Buffer.from("first"), "stdout");
    await nextTick();
    joiner.add(Buffer.from("second"), "stdout");
    joiner.add(Buffer.from(" pass"), "stdout");
    await nextTick();
    expect(delivered.map((chunk) => chunk.text)).toEqual(["first", "second pass"]);
  });
});
