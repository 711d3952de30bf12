/**
 * The internal terminal framing (src/internal/io-frames.ts) and the api's writer of client
 * frames (frameWriter in src/internal/terminal-relay.ts): frames survive any split of the byte
 * stream, and the frames of one synchronous pass leave in one write.
 */
import { Writable } from "node:stream";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { FrameDecoder, FrameKind, type IoFrame, encodeFrame } from "../../src/internal/io-frames.ts";
import { frameWriter } from "../../src/internal/terminal-relay.ts";

const frame: fc.Arbitrary<IoFrame> = fc.oneof(
  fc.string({ maxLength: 50 }).map((text) => ({ kind: FrameKind.text, text })),
  fc.uint8Array({ maxLength: 300 }).map((bytes) => ({ kind: FrameKind.binary, bytes: Buffer.from(bytes) })),
  fc.record({ code: fc.integer({ min: 1000, max: 4999 }), reason: fc.string({ maxLength: 20 }) }).map((close) => ({ kind: FrameKind.close, ...close })),
);

/** Buffers compare by content; the decoder's binary payloads are views of the chunk. */
const comparable = (frames: IoFrame[]) => frames.map((f) => (f.kind === FrameKind.binary ? { kind: f.kind, bytes: [...f.bytes] } : f));

describe("io frames", () => {
  it("decode to what was encoded, however the stream is cut into chunks", () => {
    fc.assert(
      fc.property(fc.array(frame, { maxLength: 12 }), fc.array(fc.nat(), { maxLength: 8 }), (frames, cuts) => {
        const stream = Buffer.concat(frames.map(encodeFrame));
        const points = [...new Set(cuts.map((cut) => cut % (stream.byteLength + 1)))].sort((a, b) => a - b);
        const decoder = new FrameDecoder();
        const decoded: IoFrame[] = [];
        let start = 0;
        for (const point of [...points, stream.byteLength]) {
          decoded.push(...decoder.push(stream.subarray(start, point)));
          start = point;
        }
        expect(comparable(decoded)).toEqual(comparable(frames));
      }),
      { numRuns: 300 },
    );
  });

  it("refuses a frame over the limit and an unknown kind", () => {
    const huge = Buffer.alloc(5);
    huge.writeUInt8(FrameKind.binary, 0);
    huge.writeUInt32BE(2 * 1024 * 1024, 1);
    expect(() => new FrameDecoder().push(huge)).toThrow(/exceeds the limit/);
    expect(() => new FrameDecoder().push(Buffer.from([9, 0, 0, 0, 0]))).toThrow(/unknown io frame kind 9/);
  });
});

describe("frameWriter", () => {
  it("sends the frames of one pass in one write, and a later pass's by themselves", async () => {
    const writes: Buffer[][] = [];
    const socket = new Writable({
      writev(chunks, done) {
        writes.push(chunks.map((entry) => entry.chunk as Buffer));
        done();
      },
      write(chunk: Buffer, _encoding, done) {
        writes.push([chunk]);
        done();
      },
    });
    const write = frameWriter(socket);
    const stdin = (text: string): IoFrame => ({ kind: FrameKind.binary, bytes: Buffer.from(text) });
    write(stdin("a"));
    write({ kind: FrameKind.text, text: '{"type":"resize","cols":80,"rows":24}' });
    write(stdin("b"));
    expect(writes).toEqual([]);
    await new Promise((resolve) => setImmediate(resolve));
    write(stdin("c"));
    await new Promise((resolve) => setImmediate(resolve));
    expect(writes.map((chunks) => chunks.length)).toEqual([3, 1]);
    const decoded = new FrameDecoder().push(Buffer.concat(writes.flat()));
    expect(comparable(decoded)).toEqual(comparable([stdin("a"), { kind: FrameKind.text, text: '{"type":"resize","cols":80,"rows":24}' }, stdin("b"), stdin("c")]));
  });
});
