import { describe, expect, it } from "vitest";
import type { V1Pod } from "@kubernetes/client-node";
import {
  parseSessionRecord,
  sessionRecordAnnotation,
  type SessionRecord,
} from "../../../src/kube/specs/session-record.ts";

const RECORD: SessionRecord = {
  sessionId: "k7m3qx4r2abc",
  mode: "watch",
  createdAt: "2026-11-29T16:30:00.000Z",
  apps: [
    { name: "api", entryRelativePath: "api/telo.yaml", ports: [{ port: 8080, protocol: "tcp" }], io: "tty" },
    { name: "worker", entryRelativePath: "worker/telo.yaml", ports: [], io: "streams" },
  ],
  agent: "claude",
  inspect: true,
  selfContained: false,
  config: { image: "telorun/node:0.14.0-slim", pullPolicy: "always" },
  envNames: ["GREETING", "API_KEY"],
};

function podWith(annotations?: Record<string, string>): V1Pod {
  return { apiVersion: "v1", kind: "Pod", metadata: { name: "telo-watch-k7m3qx4r2abc-x", ...(annotations && { annotations }) } };
}

describe("session record", () => {
  it("round-trips through the pod annotation", () => {
    const annotations = sessionRecordAnnotation(RECORD);
    expect(Object.keys(annotations)).toEqual(["telo.run/session"]);
    expect(parseSessionRecord(podWith(annotations))).toEqual(RECORD);
  });

  it("drops anything the record does not name, so no env value can slip in", () => {
    const leaky = { ...RECORD, env: { API_KEY: "s3cret" } } as SessionRecord;
    expect(sessionRecordAnnotation(leaky)["telo.run/session"]).not.toContain("s3cret");
  });

  it("refuses to write an invalid record", () => {
    expect(() => sessionRecordAnnotation({ ...RECORD, sessionId: "NOT-AN-ID" })).toThrow();
  });

  it("reads nothing from a pod without a record or with a malformed one", () => {
    expect(parseSessionRecord(podWith())).toBeUndefined();
    expect(parseSessionRecord({})).toBeUndefined();
    expect(parseSessionRecord(podWith({ "telo.run/session": "{not json" }))).toBeUndefined();
    expect(parseSessionRecord(podWith({ "telo.run/session": JSON.stringify({ ...RECORD, mode: "batch" }) }))).toBeUndefined();
    expect(parseSessionRecord(podWith({ "telo.run/session": JSON.stringify({ ...RECORD, apps: [] }) }))).toBeUndefined();
  });
});

describe("the record across versions", () => {
  it("keeps each app's telo version and drops config keys the backend does not act on", () => {
    const versioned: SessionRecord = { ...RECORD, apps: [{ ...RECORD.apps[0]!, telo: "0.96.0" }], config: {} };
    const written = sessionRecordAnnotation({ ...versioned, config: { registryUrl: "https://r", simulate: { x: 1 } } } as SessionRecord);
    expect(parseSessionRecord(podWith(written))).toEqual(versioned);
  });

  it("reads a record written before Telo versions (a pod running at upgrade)", () => {
    // Verbatim the annotation the previous release wrote.
    const previous =
      '{"sessionId":"k7m3qx4r2abc","mode":"run","createdAt":"2026-11-29T16:30:00.000Z","apps":[{"name":"app","entryRelativePath":"telo.yaml","ports":[],"io":"tty"}],"inspect":false,"selfContained":false,"config":{"image":"telorun/node:latest-slim","pullPolicy":"missing"},"envNames":["A"]}';
    expect(parseSessionRecord(podWith({ "telo.run/session": previous }))).toMatchObject({
      apps: [{ name: "app", entryRelativePath: "telo.yaml" }],
      config: { image: "telorun/node:latest-slim", pullPolicy: "missing" },
    });
  });
});
