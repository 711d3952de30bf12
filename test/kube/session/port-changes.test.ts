import { describe, expect, it } from "vitest";
import { planPortChange, routedPorts } from "../../../src/kube/session/port-changes.ts";

const tcp = (port: number) => ({ port, protocol: "tcp" as const });
const udp = (port: number) => ({ port, protocol: "udp" as const });
const AGENT = { name: "claude", port: 7681 };

describe("routedPorts", () => {
  it("publishes every app's ports, then the agent's tcp port", () => {
    expect(
      routedPorts(
        [
          { name: "api", entryRelativePath: "api.yaml", ports: [tcp(8080), udp(5353)], io: "tty" },
          { name: "worker", entryRelativePath: "worker.yaml", ports: [tcp(9090)], io: "streams" },
        ],
        AGENT,
      ),
    ).toEqual([tcp(8080), udp(5353), tcp(9090), tcp(7681)]);
    expect(routedPorts([], undefined)).toEqual([]);
  });
});

describe("planPortChange", () => {
  it("is nothing when the declared set is the current one, whatever the order", () => {
    expect(planPortChange({ current: [tcp(8080), udp(53)], declared: [udp(53), tcp(8080)], otherApps: [], agent: AGENT })).toBeUndefined();
  });

  it("adds and removes by (port, protocol)", () => {
    expect(planPortChange({ current: [tcp(8080), tcp(53)], declared: [tcp(8080), udp(53)], otherApps: [], agent: undefined })).toEqual({
      ports: [tcp(8080), udp(53)],
      added: [udp(53)],
      removed: [tcp(53)],
      rejected: [],
    });
  });

  it("rejects additions owned by another app or equal to the agent's tcp port, with the reasons", () => {
    expect(
      planPortChange({
        current: [tcp(8080)],
        declared: [tcp(7681), tcp(9090), udp(7681), udp(5353), tcp(3000)],
        otherApps: [tcp(9090), tcp(5353), udp(5353)],
        agent: AGENT,
      }),
    ).toEqual({
      ports: [udp(7681), tcp(3000)],
      added: [udp(7681), tcp(3000)],
      removed: [tcp(8080)],
      rejected: [
        { port: 7681, reason: "this session's co-resident agent 'claude' listens on tcp port 7681" },
        { port: 9090, reason: "another app in this session already declares tcp port 9090" },
        { port: 5353, reason: "another app in this session already declares udp port 5353" },
      ],
    });
  });

  it("reports a change of only rejected additions without touching the app's ports", () => {
    expect(planPortChange({ current: [tcp(8080)], declared: [tcp(8080), tcp(7681)], otherApps: [], agent: AGENT })).toEqual({
      ports: [tcp(8080)],
      added: [],
      removed: [],
      rejected: [{ port: 7681, reason: "this session's co-resident agent 'claude' listens on tcp port 7681" }],
    });
  });
});
