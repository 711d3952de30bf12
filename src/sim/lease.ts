// What the apiserver's coordination.k8s.io registry adds to the generic flow for Leases:
// MicroTime fields decoded the way metav1.MicroTime decodes them (Go's time.Parse with the
// layout RFC3339Micro, so exactly six fractional digits) and stored in UTC; the spec rules of
// ValidateLeaseSpec; the Lease strategy's update policy (a PUT may create, a PUT must carry a
// resourceVersion); and the CoordinatedLeaderElection fields dropped while that feature gate is
// off, as it is by default.
import type { SchemaCause } from "./admission/schema.ts";
import type { KubeObject } from "./object.ts";
import { badRequest } from "./status.ts";

const LAYOUT = "2006-01-02T15:04:05.000000Z07:00";

/** One element of the layout: a literal to skip or a field to read. */
type Chunk = { literal: string } | { std: string; read: (value: string) => { n: number; rest: string } | undefined; range?: [name: string, ok: (n: number) => boolean] };

const digits = (count: number, fixed: boolean) => (value: string) => {
  const m = (fixed ? new RegExp(`^\\d{${count}}`) : /^\d{1,2}/).exec(value);
  return m ? { n: Number(m[0]), rest: value.slice(m[0].length) } : undefined;
};

// Go checks a field's range as soon as it has read it: "25:…" fails on the hour, not on what follows.
const CHUNKS: Chunk[] = [
  { std: "2006", read: digits(4, true) },
  { literal: "-" },
  { std: "01", read: digits(2, true), range: ["month", (n) => n >= 1 && n <= 12] },
  { literal: "-" },
  { std: "02", read: digits(2, true) },
  { literal: "T" },
  // Go reads the hour with one or two digits even under "15".
  { std: "15", read: digits(2, false), range: ["hour", (n) => n < 24] },
  { literal: ":" },
  { std: "04", read: digits(2, true), range: ["minute", (n) => n < 60] },
  { literal: ":" },
  { std: "05", read: digits(2, true), range: ["second", (n) => n < 60] },
  { std: ".000000", read: readMicros, range: ["fractional second", (n) => n >= 0] },
];

/**
 * Six fractional digits after "." or ",", read as Go reads them: with its atoi, which takes a
 * sign, so ".+23456" is 23456 µs and ".-23456" a fraction out of range.
 */
function readMicros(value: string): { n: number; rest: string } | undefined {
  const m = /^[.,]([+-]?)(\d*)$/.exec(value.slice(0, 7));
  if (value.length < 7 || !m) return undefined;
  const n = Number(m[2] || 0);
  return { n: m[1] === "-" && n !== 0 ? -n : n, rest: value.slice(7) };
}

class TimeParseError extends Error {}

function cannotParse(input: string, value: string, element: string): TimeParseError {
  return new TimeParseError(`parsing time ${JSON.stringify(input)} as ${JSON.stringify(LAYOUT)}: cannot parse ${JSON.stringify(value)} as ${JSON.stringify(element)}`);
}

/** Minutes east of UTC of a `Z07:00` zone, consuming it from `value`. */
function readZone(input: string, value: string): { offset: number; rest: string } {
  if (value.startsWith("Z")) return { offset: 0, rest: value.slice(1) };
  const m = /^([+-])(\d{2}):(\d{2})/.exec(value);
  if (!m) throw cannotParse(input, value, "Z07:00");
  if (Number(m[2]) > 24) throw new TimeParseError(`parsing time ${JSON.stringify(input)}: time zone offset hour out of range`);
  if (Number(m[3]) > 60) throw new TimeParseError(`parsing time ${JSON.stringify(input)}: time zone offset minute out of range`);
  return { offset: (m[1] === "-" ? -1 : 1) * (Number(m[2]) * 60 + Number(m[3])), rest: value.slice(6) };
}

/** metav1.MicroTime's decoding: the instant, re-rendered as the apiserver stores it (UTC, six digits). */
export function parseMicroTime(input: string): string {
  let value = input;
  const fields: number[] = [];
  for (const chunk of CHUNKS) {
    if ("literal" in chunk) {
      if (!value.startsWith(chunk.literal)) throw cannotParse(input, value, chunk.literal);
      value = value.slice(chunk.literal.length);
      continue;
    }
    const got = chunk.read(value);
    if (!got) throw cannotParse(input, value, chunk.std);
    if (chunk.range && !chunk.range[1](got.n)) throw new TimeParseError(`parsing time ${JSON.stringify(input)}: ${chunk.range[0]} out of range`);
    fields.push(got.n);
    value = got.rest;
  }
  const zone = readZone(input, value);
  if (zone.rest !== "") throw new TimeParseError(`parsing time ${JSON.stringify(input)}: extra text: ${JSON.stringify(zone.rest)}`);
  const [year, month, day, hour, minute, second, micros] = fields as [number, number, number, number, number, number, number];
  const daysInMonth = new Date(Date.UTC(year, month, 0)).getUTCDate();
  if (day < 1 || day > daysInMonth) throw new TimeParseError(`parsing time ${JSON.stringify(input)}: day out of range`);
  // setUTCFullYear, unlike Date.UTC, takes years below 100 as they are.
  const local = new Date(0);
  local.setUTCFullYear(year, month - 1, day);
  local.setUTCHours(hour, minute, second, 0);
  const utc = new Date(local.getTime() - zone.offset * 60_000);
  const two = (n: number) => String(n).padStart(2, "0");
  const y = utc.getUTCFullYear();
  // Go writes a year before 1 with a minus sign and four digits (0000-01-01 at +01:00 is -0001-12-31).
  const shownYear = y < 0 ? `-${String(-y).padStart(4, "0")}` : String(y).padStart(4, "0");
  return `${shownYear}-${two(utc.getUTCMonth() + 1)}-${two(utc.getUTCDate())}T${two(utc.getUTCHours())}:${two(utc.getUTCMinutes())}:${two(utc.getUTCSeconds())}.${String(micros).padStart(6, "0")}Z`;
}

const MICRO_TIME_FIELDS = ["acquireTime", "renewTime"] as const;

/**
 * Decodes a Lease body as the apiserver's JSON decoder would: a MicroTime that does not parse
 * makes the whole body undecodable (400); one that parses is stored in UTC with six digits; a
 * null one is absent.
 */
export function decodeLease(obj: KubeObject): void {
  const spec = obj.spec;
  if (spec === null) delete obj.spec;
  if (!spec || typeof spec !== "object") return;
  for (const field of MICRO_TIME_FIELDS) {
    const raw = spec[field];
    if (raw === null) delete spec[field];
    if (typeof raw !== "string") continue;
    try {
      spec[field] = parseMicroTime(raw);
    } catch (err) {
      if (!(err instanceof TimeParseError)) throw err;
      throw badRequest(`Lease in version "v1" cannot be handled as a Lease: ${err.message}`);
    }
  }
  // The CoordinatedLeaderElection gate is off by default: its fields are dropped, not refused.
  delete spec.strategy;
  delete spec.preferredHolder;
}

/** ValidateLeaseSpec: the rules the schema cannot carry. */
export function leaseSpecCauses(obj: KubeObject): SchemaCause[] {
  const spec = obj.spec ?? {};
  const causes: SchemaCause[] = [];
  const invalid = (field: string, value: unknown, why: string) => causes.push({ field: `spec.${field}`, reason: "FieldValueInvalid", message: `Invalid value: ${JSON.stringify(value)}: ${why}` });
  if (typeof spec.leaseDurationSeconds === "number" && spec.leaseDurationSeconds <= 0) invalid("leaseDurationSeconds", spec.leaseDurationSeconds, "must be greater than 0");
  if (typeof spec.leaseTransitions === "number" && spec.leaseTransitions < 0) invalid("leaseTransitions", spec.leaseTransitions, "must be greater than or equal to 0");
  return causes;
}

/** Kinds whose registry lets a PUT create the object (AllowCreateOnUpdate). */
export function createsOnUpdate(kind: string): boolean {
  return kind === "Lease";
}

/** Kinds whose registry refuses a PUT without a resourceVersion (AllowUnconditionalUpdate false). */
export function requiresResourceVersionOnUpdate(kind: string): boolean {
  return kind === "Lease";
}
