/**
 * The api's view of WebSocket frames (src/internal/ws-wire.ts): frames made by ws (an
 * implementation other than the one under test), cut into chunks anywhere, are scanned to
 * exactly their ends; a close frame marks the conversation closed once whole; the handshake
 * answer and close frame are what RFC 6455 and ws agree on.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import * as ws from "ws";
import { FRAME_BOUNDARY, acceptKey, closeFrame, isWebSocketKey, scanFrames } from "../../src/internal/ws-wire.ts";

/** ws's own framing, which its types do not declare. */
const { Receiver, Sender } = ws as unknown as {
  Receiver: new (options: object) => NodeJS.WritableStream & { on(event: string, listener: (...args: never[]) => void): unknown };
  Sender: { frame(data: Buffer, options: object): Buffer[] };
};

type Spec = { opcode: number; fin: boolean; length: number; mask: boolean };

function encode(spec: Spec): Buffer {
  const parts = Sender.frame(Buffer.alloc(spec.length, 7), {
    fin: spec.fin,
    opcode: spec.opcode,
    mask: spec.mask,
    readOnly: false,
    rsv1: false,
  });
  return Buffer.concat(parts);
}

const frameSpec = fc.record({
  opcode: fc.constantFrom(0x0, 0x1, 0x2, 0x9, 0xa),
  fin: fc.boolean(),
  // Each length encoding: 7-bit, 16-bit and 64-bit.
  length: fc.oneof(fc.integer({ min: 0, max: 125 }), fc.integer({ min: 126, max: 70_000 }), fc.constant(65_536)),
  mask: fc.boolean(),
});

describe("scanFrames", () => {
  it("reports, for every chunk, the end of the last frame that ended in it, wherever the stream is cut", () => {
    fc.assert(
      fc.property(fc.array(frameSpec, { minLength: 1, maxLength: 12 }), fc.array(fc.integer({ min: 1, max: 40_000 }), { maxLength: 30 }), (specs, cuts) => {
        const frames = specs.map(encode);
        const stream = Buffer.concat(frames);
        const ends: number[] = [];
        frames.reduce((offset, frame) => (ends.push(offset + frame.byteLength), offset + frame.byteLength), 0);
        const points = [...new Set(cuts.map((cut) => cut % stream.byteLength).filter((cut) => cut > 0))].sort((a, b) => a - b);
        let scan = FRAME_BOUNDARY;
        let start = 0;
        for (const end of [...points, stream.byteLength]) {
          const result = scanFrames(scan, stream.subarray(start, end));
          scan = result.scan;
          const inside = ends.filter((frameEnd) => frameEnd > start && frameEnd <= end);
          expect(result.boundary).toBe(inside.length === 0 ? -1 : inside.at(-1)! - start);
          start = end;
        }
        expect(scan.header).toEqual([]);
        expect(scan.payloadLeft).toBe(0);
        expect(scan.closed).toBe(false);
      }),
      { numRuns: 400 },
    );
  });

  it("marks the stream closed only once a close frame is whole", () => {
    const close = closeFrame(1000, "done");
    const first = scanFrames(FRAME_BOUNDARY, close.subarray(0, 3));
    expect(first).toMatchObject({ boundary: -1, scan: { closed: false } });
    const second = scanFrames(first.scan, close.subarray(3));
    expect(second).toMatchObject({ boundary: close.byteLength - 3, scan: { closed: true, payloadLeft: 0 } });
  });
});

describe("closeFrame", () => {
  it("is read by ws as the code and reason, a long reason cut at a character to fit a control frame", async () => {
    const read = (frame: Buffer) =>
      new Promise<{ code: number; reason: string }>((resolve, reject) => {
        const receiver = new Receiver({ isServer: false });
        receiver.on("conclude", (code: number, reason: Buffer) => resolve({ code, reason: reason.toString() }));
        receiver.on("error", reject);
        receiver.write(frame);
      });
    expect(await read(closeFrame(1011, "supervisor unavailable"))).toEqual({ code: 1011, reason: "supervisor unavailable" });
    const long = await read(closeFrame(1012, "é".repeat(100)));
    expect(long.code).toBe(1012);
    expect(Buffer.byteLength(long.reason)).toBeLessThanOrEqual(123);
    expect(long.reason).toBe("é".repeat(61));
  });
});

describe("the handshake", () => {
  it("answers RFC 6455's sample key with its sample accept value", () => {
    expect(isWebSocketKey("dGhlIHNhbXBsZSBub25jZQ==")).toBe(true);
    expect(isWebSocketKey("not a key")).toBe(false);
    expect(acceptKey("dGhlIHNhbXBsZSBub25jZQ==")).toBe("s3pPLMBiTxaQ9kYGzzhZRbK+xOo=");
  });
});
