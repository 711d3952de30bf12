/**
 * Positions in a container's log (docs/replicas.md "Output across a handover"). The log read
 * with `timestamps=true` is one line per output line, each prefixed by the time its first byte
 * was written (RFC 3339 with nanoseconds); a line still open at the read has no newline yet. A
 * position is a timestamp and how many bytes of the lines carrying exactly that timestamp lie
 * before it: lines written together share a timestamp, and a line completed after the position
 * keeps the timestamp of its start. Pure.
 */
import * as v from "valibot";
import { unifyLineEnds } from "./line-ends.ts";

export const LogPositionSchema = v.object({
  /** The timestamp of the line holding the last byte before the position, as the log gave it. */
  at: v.pipe(v.string(), v.maxLength(64)),
  /** Bytes of the lines stamped `at` that lie before the position. */
  skip: v.pipe(v.number(), v.integer(), v.minValue(0)),
});
export type LogPosition = v.InferOutput<typeof LogPositionSchema>;

export type LogLine = { at: string; ns: bigint; text: Buffer };

const STAMP = /^(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d)(?:\.(\d{1,9}))?(Z|[+-]\d\d:\d\d)$/;

/** Nanoseconds since the epoch of an RFC 3339 timestamp with up to nine fractional digits; undefined if it is not one. */
export function stampNanos(stamp: string): bigint | undefined {
  const match = STAMP.exec(stamp);
  if (!match) return undefined;
  const seconds = Date.parse(`${match[1]}${match[3]}`);
  if (Number.isNaN(seconds)) return undefined;
  return BigInt(seconds) * 1_000_000n + BigInt((match[2] ?? "").padEnd(9, "0"));
}

/**
 * A terminal container's log as its terminal showed it. The terminal turns every newline the app
 * writes into CR LF, and the runtime's log writer (containerd's CRI logger) strips the CR that
 * ends each line, so a log read shows bare LFs where the attach showed CR LF: put them back, or
 * the log's lines would neither be found among the bytes a terminal showed nor display right.
 * A log that kept its CRs (the simulated cluster's) is returned as it is.
 */
export function asShownByTerminal(log: Buffer): Buffer {
  const parts: Buffer[] = [];
  let start = 0;
  for (let newline = log.indexOf(0x0a); newline !== -1; newline = log.indexOf(0x0a, newline + 1)) {
    if (newline > 0 && log[newline - 1] === 0x0d) continue;
    parts.push(log.subarray(start, newline), CR);
    start = newline;
  }
  if (parts.length === 0) return log;
  parts.push(log.subarray(start));
  return Buffer.concat(parts);
}
const CR = Buffer.from("\r");

/** The lines of a log read with timestamps; a line whose prefix does not parse ends the read (it is not this format). */
export function parseStampedLog(log: Buffer): LogLine[] {
  const lines: LogLine[] = [];
  let start = 0;
  while (start < log.byteLength) {
    const newline = log.indexOf(0x0a, start);
    const end = newline === -1 ? log.byteLength : newline + 1;
    const space = log.indexOf(0x20, start);
    if (space === -1 || space >= end) break;
    const at = log.subarray(start, space).toString("latin1");
    const ns = stampNanos(at);
    if (ns === undefined) break;
    lines.push({ at, ns, text: log.subarray(space + 1, end) });
    start = end;
  }
  return lines;
}

/**
 * Where `delivered` (the last bytes a terminal showed from the container, in order) ends in
 * `lines`: the position just after the only place they occur. Undefined when they occur nowhere
 * (the read did not reach back far enough, or the terminal saw other bytes) or more than once
 * (repetitive output: which copy was the last shown cannot be told).
 */
export function positionAfter(lines: readonly LogLine[], delivered: Buffer): LogPosition | undefined {
  // Compared with their line ends unified (line-ends.ts): CRs before a line's end tell nothing about where the bytes are.
  const wanted = unifyLineEnds(delivered).bytes;
  if (wanted.byteLength === 0) return undefined;
  const unified = lines.map((line) => unifyLineEnds(line.text).bytes);
  const content = Buffer.concat(unified);
  const found = content.indexOf(wanted);
  if (found === -1 || content.indexOf(wanted, found + 1) !== -1) return undefined;
  const end = found + wanted.byteLength;
  // The line holding the end, and where its timestamp's group starts, counted in the lines as shown.
  let offset = 0;
  let shownOffset = 0;
  let groupStart = 0;
  for (let index = 0; index < lines.length; index += 1) {
    const line = lines[index]!;
    if (index === 0 || line.ns !== lines[index - 1]!.ns) groupStart = shownOffset;
    const length = unified[index]!.byteLength;
    if (offset + length >= end) {
      // A line as shown differs from its unified form only in the CRs before its end: the end
      // falls after the whole line, or in the part both forms share.
      const within = end - offset === length ? line.text.byteLength : end - offset;
      return { at: line.at, skip: shownOffset + within - groupStart };
    }
    offset += length;
    shownOffset += line.text.byteLength;
  }
  return undefined;
}


/** The bytes of `lines` after `position`: later lines whole, and the rest of its own timestamp's lines. */
export function bytesAfter(lines: readonly LogLine[], position: LogPosition): Buffer {
  const at = stampNanos(position.at);
  if (at === undefined) return Buffer.alloc(0);
  let skip = position.skip;
  const parts: Buffer[] = [];
  for (const line of lines) {
    if (line.ns < at) continue;
    if (line.ns > at) {
      parts.push(line.text);
      continue;
    }
    const dropped = Math.min(skip, line.text.byteLength);
    skip -= dropped;
    parts.push(line.text.subarray(dropped));
  }
  return Buffer.concat(parts);
}

/** When the line holding `position` was printed, in ms since the epoch; undefined for a stamp that does not parse. */
export function positionTime(position: LogPosition): number | undefined {
  const at = stampNanos(position.at);
  return at === undefined ? undefined : Number(at / 1_000_000n);
}

/** Whole seconds to read back so that a read starting then holds what was printed at `sinceMs` (a margin for clocks apart). */
export function secondsBack(sinceMs: number, now: number, marginSeconds = 5): number {
  return Math.max(1, Math.ceil((now - sinceMs) / 1000) + marginSeconds);
}

/** Whole seconds to read back so that a read starting then holds `position`. */
export function secondsSince(position: LogPosition, now: number, marginSeconds = 5): number {
  return secondsBack(positionTime(position) ?? now, now, marginSeconds);
}
