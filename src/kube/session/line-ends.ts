/**
 * Terminal output compared with the pod log, line ends aside. A line an app ends with CR LF
 * reaches the terminal as CR CR LF (the tty maps every LF to CR LF), and a runtime's log may keep
 * or drop the CR the tty added (containerd drops one, so the log holds CR LF where the terminal
 * showed CR CR LF, and LF where it showed CR LF). Compared with every run of CRs that ends a line
 * left out, the same output matches whichever way it was stored; `origin` maps an offset in the
 * unified bytes back to the bytes given. Pure.
 */
const CR = 0x0d;
const LF = 0x0a;

export type Unified = {
  bytes: Buffer;
  /** The offset in the bytes given of the unified byte at `offset` (the length given, at the end). */
  origin(offset: number): number;
};

/** `bytes` with every run of CRs that ends a line (before an LF, or at the very end) left out. */
export function unifyLineEnds(input: Uint8Array): Unified {
  const bytes = Buffer.from(input.buffer, input.byteOffset, input.byteLength);
  if (!bytes.includes(CR)) return { bytes, origin: (offset) => offset };
  /** The parts kept: where each starts in the bytes given, and its length. */
  const parts: { given: number; length: number }[] = [];
  let from = 0;
  for (let cr = bytes.indexOf(CR); cr !== -1; cr = bytes.indexOf(CR, from)) {
    let after = cr;
    while (bytes[after] === CR) after += 1;
    const endsLine = after === bytes.byteLength || bytes[after] === LF;
    parts.push({ given: from, length: (endsLine ? cr : after) - from });
    from = after;
  }
  parts.push({ given: from, length: bytes.byteLength - from });
  return {
    bytes: Buffer.concat(parts.map((part) => bytes.subarray(part.given, part.given + part.length))),
    origin(offset) {
      let before = 0;
      for (const part of parts) {
        if (offset < before + part.length) return part.given + (offset - before);
        before += part.length;
      }
      return bytes.byteLength;
    },
  };
}
