import { describe, expect, it } from "vitest";
import { agentEndpoint, sessionEndpoints } from "../../../src/kube/status/endpoints.ts";

const ID = "k7m3qx4r2abc";
const PORTS = [
  { port: 8080, protocol: "tcp" as const },
  { port: 5353, protocol: "udp" as const },
];

describe("sessionEndpoints", () => {
  it("gives tcp ports a public host and URL when routed with a base domain", () => {
    expect(sessionEndpoints(PORTS, { sessionId: ID, baseDomain: "run.example.com", routed: true })).toEqual([
      { host: `8080-${ID}.run.example.com`, port: 8080, protocol: "tcp", url: `https://8080-${ID}.run.example.com` },
      { host: "", port: 5353, protocol: "udp" },
    ]);
  });

  it("leaves the host to the client when logs-only, even with a base domain", () => {
    expect(sessionEndpoints(PORTS, { sessionId: ID, baseDomain: "run.example.com", routed: false })).toEqual([
      { host: "", port: 8080, protocol: "tcp" },
      { host: "", port: 5353, protocol: "udp" },
    ]);
    expect(sessionEndpoints(PORTS, { sessionId: ID, baseDomain: undefined, routed: true })).toEqual([
      { host: "", port: 8080, protocol: "tcp" },
      { host: "", port: 5353, protocol: "udp" },
    ]);
  });

  it("reports the agent on its tcp port like any routed port", () => {
    expect(agentEndpoint(7681, { sessionId: ID, baseDomain: "run.example.com", routed: true })).toEqual({
      host: `7681-${ID}.run.example.com`,
      port: 7681,
      protocol: "tcp",
      url: `https://7681-${ID}.run.example.com`,
    });
  });
});
