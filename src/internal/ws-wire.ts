/**
 * The few pieces of the WebSocket wire (RFC 6455) the api needs to splice a terminal without
 * parsing its messages: the handshake answer it gives itself when no supervisor can take the
 * terminal, a close frame, and a scan of the supervisor's frame headers, so that a close frame
 * the api adds (the supervisor gone, the api shutting down) starts where a frame ends, never
 * inside one. Pure: nothing here touches a socket.
 */
import { createHash } from "node:crypto";

const ACCEPT_GUID = "258EAFA5-E914-47DA-95CA-C5AB0DC85B11";
const OPCODE_CLOSE = 0x8;
/** A control frame's payload is at most 125 bytes: a code (2) and a reason of at most 123. */
const MAX_CLOSE_REASON_BYTES = 123;

/** A client's Sec-WebSocket-Key: 16 random bytes in base64. */
export function isWebSocketKey(key: unknown): key is string {
  return typeof key === "string" && /^[+/0-9A-Za-z]{22}==$/.test(key);
}

/** The Sec-WebSocket-Accept that proves the answer was made for this key. */
export function acceptKey(key: string): string {
  return createHash("sha1").update(key + ACCEPT_GUID).digest("base64");
}

/** A complete `101` answer to the upgrade of `key`, with no subprotocol and no extension. */
export function handshakeAnswer(key: string): Buffer {
  const lines = ["HTTP/1.1 101 Switching Protocols", "Upgrade: websocket", "Connection: Upgrade", `Sec-WebSocket-Accept: ${acceptKey(key)}`, "", ""];
  return Buffer.from(lines.join("\r\n"), "latin1");
}

/** An unmasked close frame (a server's), its reason cut to what a control frame may carry. */
export function closeFrame(code: number, reason: string): Buffer {
  let text = Buffer.from(reason, "utf8");
  // Cut at a character boundary: a close reason must be valid UTF-8.
  if (text.byteLength > MAX_CLOSE_REASON_BYTES) text = Buffer.from(text.subarray(0, MAX_CLOSE_REASON_BYTES).toString("utf8").replace(/\uFFFD+$/, ""), "utf8");
  const frame = Buffer.allocUnsafe(4 + text.byteLength);
  frame[0] = 0x80 | OPCODE_CLOSE;
  frame[1] = 2 + text.byteLength;
  frame.writeUInt16BE(code, 2);
  text.copy(frame, 4);
  return frame;
}

/** Where a byte stream of WebSocket frames stands between two chunks. */
export type FrameScan = {
  /** The header bytes of the frame under way, while it is incomplete; empty at a frame boundary and in a payload. */
  readonly header: readonly number[];
  /** The payload bytes the frame under way still owes (0 at a boundary). */
  readonly payloadLeft: number;
  /** The opcode of the frame under way (its payload being read). */
  readonly opcode: number;
  /** Whether the frame under way ends a message (FIN). */
  readonly fin: boolean;
  /** A whole close frame has gone by: the sender has ended its side of the conversation. */
  readonly closed: boolean;
};

export const FRAME_BOUNDARY: FrameScan = { header: [], payloadLeft: 0, opcode: 0, fin: true, closed: false };

/** How many header bytes a frame whose header starts with `header` has (2 to 14); 2 until the second byte is known. */
function headerLength(header: readonly number[]): number {
  if (header.length < 2) return 2;
  const length7 = header[1]! & 0x7f;
  const masked = (header[1]! & 0x80) !== 0;
  return 2 + (length7 === 126 ? 2 : length7 === 127 ? 8 : 0) + (masked ? 4 : 0);
}

/** A complete header's payload length. Lengths past 2^53 (which no peer of ours sends) come out inexact but huge. */
function payloadLength(header: readonly number[]): number {
  const length7 = header[1]! & 0x7f;
  if (length7 < 126) return length7;
  const bytes = length7 === 126 ? header.slice(2, 4) : header.slice(2, 10);
  return bytes.reduce((total, byte) => total * 256 + byte, 0);
}

/**
 * Advances `scan` over `chunk`: the state after it, and the offset just past the last frame that
 * ended inside the chunk (-1 when none did). Bytes up to that offset are whole frames; the rest
 * belongs to a frame still under way.
 */
export function scanFrames(scan: FrameScan, chunk: Uint8Array): { scan: FrameScan; boundary: number } {
  let header = scan.header.length > 0 ? [...scan.header] : [];
  let { payloadLeft, opcode, fin, closed } = scan;
  let boundary = -1;
  let offset = 0;
  const frameEnded = () => {
    if (opcode === OPCODE_CLOSE) closed = true;
    boundary = offset;
  };
  while (offset < chunk.byteLength) {
    if (payloadLeft > 0) {
      const taken = Math.min(payloadLeft, chunk.byteLength - offset);
      offset += taken;
      payloadLeft -= taken;
      if (payloadLeft === 0) frameEnded();
      continue;
    }
    header.push(chunk[offset]!);
    offset += 1;
    if (header.length < headerLength(header)) continue;
    opcode = header[0]! & 0x0f;
    fin = (header[0]! & 0x80) !== 0;
    payloadLeft = payloadLength(header);
    header = [];
    if (payloadLeft === 0) frameEnded();
  }
  return { scan: { header, payloadLeft, opcode, fin, closed }, boundary };
}
