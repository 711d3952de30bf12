// metav1.MicroTime decoding in the simulated apiserver, held to Go: each expected value below is
// what Go's time.Parse with the layout RFC3339Micro answered for the input (re-rendered in UTC
// as MicroTime marshals it), recorded with the Go toolchain of the real-cluster tier.
import { describe, expect, it } from "vitest";
import { parseMicroTime } from "../../src/sim/lease.ts";

const GO_ANSWERS: Array<[input: string, answer: string]> = [
  ["2026-12-01T20:52:39.123456Z", "2026-12-01T20:52:39.123456Z"],
  ["2026-12-01T22:52:39.123456+02:00", "2026-12-01T20:52:39.123456Z"],
  ["2026-12-01T20:52:39,123456-00:30", "2026-12-01T21:22:39.123456Z"],
  ["2026-12-01T5:52:39.123456Z", "2026-12-01T05:52:39.123456Z"],
  ["2026-12-01T20:52:39.123Z", "ERR parsing time \"2026-12-01T20:52:39.123Z\" as \"2006-01-02T15:04:05.000000Z07:00\": cannot parse \".123Z\" as \".000000\""],
  ["2026-12-01T20:52:39Z", "ERR parsing time \"2026-12-01T20:52:39Z\" as \"2006-01-02T15:04:05.000000Z07:00\": cannot parse \"Z\" as \".000000\""],
  ["2026-12-01T20:52:39.123456789Z", "ERR parsing time \"2026-12-01T20:52:39.123456789Z\" as \"2006-01-02T15:04:05.000000Z07:00\": cannot parse \"789Z\" as \"Z07:00\""],
  ["2026-13-01T20:52:39.123456Z", "ERR parsing time \"2026-13-01T20:52:39.123456Z\": month out of range"],
  ["2026-02-30T20:52:39.123456Z", "ERR parsing time \"2026-02-30T20:52:39.123456Z\": day out of range"],
  ["2024-02-29T23:59:59.999999Z", "2024-02-29T23:59:59.999999Z"],
  ["2026-12-01T250:52:39.123456Z", "ERR parsing time \"2026-12-01T250:52:39.123456Z\": hour out of range"],
  ["2026-12-01T20:52:39.123456+25:00", "ERR parsing time \"2026-12-01T20:52:39.123456+25:00\": time zone offset hour out of range"],
  ["2026-12-01T20:52:39.123456+02:61", "ERR parsing time \"2026-12-01T20:52:39.123456+02:61\": time zone offset minute out of range"],
  ["2026-12-01T20:52:39.123456+0200", "ERR parsing time \"2026-12-01T20:52:39.123456+0200\" as \"2006-01-02T15:04:05.000000Z07:00\": cannot parse \"+0200\" as \"Z07:00\""],
  ["2026-12-01 20:52:39.123456Z", "ERR parsing time \"2026-12-01 20:52:39.123456Z\" as \"2006-01-02T15:04:05.000000Z07:00\": cannot parse \" 20:52:39.123456Z\" as \"T\""],
  ["2026-12-01T20:52:39.123456Zx", "ERR parsing time \"2026-12-01T20:52:39.123456Zx\": extra text: \"x\""],
  ["2026-12-01t20:52:39.123456Z", "ERR parsing time \"2026-12-01t20:52:39.123456Z\" as \"2006-01-02T15:04:05.000000Z07:00\": cannot parse \"t20:52:39.123456Z\" as \"T\""],
  ["0000-01-01T00:00:00.000000+01:00", "-0001-12-31T23:00:00.000000Z"],
  ["2026-12-01T20:52:39.+23456Z", "2026-12-01T20:52:39.023456Z"],
  ["2026-12-01T20:52:39.-23456Z", "ERR parsing time \"2026-12-01T20:52:39.-23456Z\": fractional second out of range"],
  ["2026-12-01T20:52:639.123456Z", "ERR parsing time \"2026-12-01T20:52:639.123456Z\": second out of range"],
  ["", "ERR parsing time \"\" as \"2006-01-02T15:04:05.000000Z07:00\": cannot parse \"\" as \"2006\""],
];

function answer(input: string): string {
  try {
    return parseMicroTime(input);
  } catch (err) {
    return `ERR ${(err as Error).message}`;
  }
}

describe("MicroTime decoding", () => {
  it.each(GO_ANSWERS)("%j decodes as Go decodes it", (input, expected) => {
    expect(answer(input)).toBe(expected);
  });
});
