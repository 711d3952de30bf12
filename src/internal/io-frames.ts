/**
 * Framing of the terminal byte stream across the internal socket, after the HTTP upgrade:
 * `[kind: u8][length: u32 BE][payload]`. The supervisor sends WebSocket-ready messages
 * (text, binary, close); the api sends the client's stdin bytes and text control frames.
 * The api is a pipe: it never interprets a frame's payload.
 */
export const FrameKind = { text: 1, binary: 2, close: 3 } as const;
export type FrameKind = (typeof FrameKind)[keyof typeof FrameKind];

export type IoFrame =
  | { kind: typeof FrameKind.text; text: string }
  | { kind: typeof FrameKind.binary; bytes: Buffer }
  | { kind: typeof FrameKind.close; code: number; reason: string };

/** Bytes of a frame's header; a buffer built with this much headroom can be framed in place. */
export const HEADER_BYTES = 5;
/** A frame larger than this is a protocol violation: the peer is not speaking this protocol. */
export const MAX_FRAME_BYTES = 1024 * 1024;

export function encodeFrame(frame: IoFrame): Buffer {
  const payload =
    frame.kind === FrameKind.text
      ? Buffer.from(frame.text, "utf8")
      : frame.kind === FrameKind.binary
        ? frame.bytes
        : Buffer.from(JSON.stringify({ code: frame.code, reason: frame.reason }), "utf8");
  // One allocation and one copy per frame: the terminal pays this for every chunk it relays.
  const encoded = Buffer.allocUnsafe(HEADER_BYTES + payload.byteLength);
  encoded.writeUInt8(frame.kind, 0);
  encoded.writeUInt32BE(payload.byteLength, 1);
  encoded.set(payload, HEADER_BYTES);
  return encoded;
}

/**
 * Frames `buffer` as a binary frame in place: its first HEADER_BYTES are the headroom left for
 * the header, the rest is the payload. No second buffer, no second copy of the payload.
 */
export function frameInPlace(buffer: Buffer): Buffer {
  buffer.writeUInt8(FrameKind.binary, 0);
  buffer.writeUInt32BE(buffer.byteLength - HEADER_BYTES, 1);
  return buffer;
}

export class FrameDecoder {
  #pending: Buffer = Buffer.alloc(0);

  /**
   * Feeds bytes; returns the complete frames. Throws on a malformed stream. A binary frame's
   * bytes are a view of the chunk that carried them, not a copy: both processes hand them on
   * at once (to a WebSocket or an attach, which copy or send them), so a copy per frame would
   * be paid for nothing.
   */
  push(chunk: Buffer): IoFrame[] {
    this.#pending = this.#pending.byteLength === 0 ? chunk : Buffer.concat([this.#pending, chunk]);
    const frames: IoFrame[] = [];
    while (this.#pending.byteLength >= HEADER_BYTES) {
      const kind = this.#pending.readUInt8(0);
      const length = this.#pending.readUInt32BE(1);
      if (length > MAX_FRAME_BYTES) throw new Error(`io frame of ${length} bytes exceeds the limit`);
      if (this.#pending.byteLength < HEADER_BYTES + length) break;
      const payload = this.#pending.subarray(HEADER_BYTES, HEADER_BYTES + length);
      this.#pending = this.#pending.subarray(HEADER_BYTES + length);
      frames.push(decodePayload(kind, payload));
    }
    return frames;
  }
}

function decodePayload(kind: number, payload: Buffer): IoFrame {
  switch (kind) {
    case FrameKind.text:
      return { kind, text: payload.toString("utf8") };
    case FrameKind.binary:
      return { kind, bytes: payload };
    case FrameKind.close: {
      const { code, reason } = JSON.parse(payload.toString("utf8")) as { code: number; reason: string };
      return { kind, code, reason };
    }
    default:
      throw new Error(`unknown io frame kind ${kind}`);
  }
}
