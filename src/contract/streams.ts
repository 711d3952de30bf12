/**
 * The byte-level formats clients read: SSE frames (docs/api.md "Event stream (SSE)") and the WebSocket's binary
 * output frames (docs/api.md "Terminal (WebSocket)"). Both the supervisor (which writes them) and the client library (which
 * reads them) use this module.
 */
import type { ByteStreamTag } from "./wire.ts";

export function sseEventFrame(id: number, type: string, json: string): string {
  return `id: ${id}\nevent: ${type}\ndata: ${json}\n\n`;
}

export const SSE_GAP_FRAME = `event: gap\ndata: ${JSON.stringify({ reason: "buffer_evicted" })}\n\n`;
export const SSE_HEARTBEAT = ": heartbeat\n\n";

export const STREAM_TAG_CODES: Record<ByteStreamTag, number> = { tty: 0, stdout: 1, stderr: 2 };
const TAGS_BY_CODE: ByteStreamTag[] = ["tty", "stdout", "stderr"];

/** `[seq: u32 BE][stream: u8][payload]`. */
export function encodeByteFrame(seq: number, tag: ByteStreamTag, payload: Uint8Array): Buffer {
  // One allocation and one copy per chunk: the supervisor pays this for every chunk it sends.
  const frame = Buffer.allocUnsafe(5 + payload.byteLength);
  frame.writeUInt32BE(seq >>> 0, 0);
  frame.writeUInt8(STREAM_TAG_CODES[tag], 4);
  frame.set(payload, 5);
  return frame;
}

/** Undefined for frames shorter than 5 bytes or with an unknown stream code. */
export function decodeByteFrame(frame: Uint8Array): { seq: number; tag: ByteStreamTag; payload: Uint8Array } | undefined {
  if (frame.byteLength < 5) return undefined;
  const view = new DataView(frame.buffer, frame.byteOffset, frame.byteLength);
  const tag = TAGS_BY_CODE[view.getUint8(4)];
  if (!tag) return undefined;
  return { seq: view.getUint32(0), tag, payload: frame.subarray(5) };
}

/** WebSocket close codes the runner uses (docs/api.md "Terminal (WebSocket)"). */
export const CloseCodes = {
  normal: 1000,
  /** A frame over the documented 1 MiB limit. */
  messageTooBig: 1009,
  /** The api process is shutting down (SIGTERM); clients reconnect. */
  serviceRestart: 1012,
  forbiddenOrigin: 4403,
  notFound: 4404,
  terminalNothingToReplay: 4410,
} as const;
