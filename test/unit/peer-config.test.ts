/** The peer link's variables (docs/relay.md), read through the core config loader. */
import { describe, expect, it } from "vitest";
import { loadCoreConfig } from "../../src/config/core.ts";
import { parsePeerAddress } from "../../src/config/peer.ts";

const SECRET = "0123456789abcdef0123456789abcdef";

describe("peer config", () => {
  it("is off by default", () => {
    expect(loadCoreConfig({}).peer).toEqual({ listen: undefined, secret: undefined, supervisor: undefined });
  });

  it("reads the listen address, the credential and the api's peer supervisor", () => {
    const peer = loadCoreConfig({ RUNNER_PEER_LISTEN: "[::]:8063", RUNNER_PEER_SECRET: SECRET, RUNNER_PEER_SUPERVISOR: "10.0.0.5:8063" }).peer;
    expect(peer).toEqual({ listen: { host: "::", port: 8063 }, secret: SECRET, supervisor: { host: "10.0.0.5", port: 8063 } });
  });

  it("refuses an address without the credential, a short credential and a malformed address", () => {
    expect(() => loadCoreConfig({ RUNNER_PEER_LISTEN: "0.0.0.0:8063" })).toThrow("RUNNER_PEER_LISTEN needs RUNNER_PEER_SECRET");
    expect(() => loadCoreConfig({ RUNNER_PEER_SUPERVISOR: "10.0.0.5:8063" })).toThrow("RUNNER_PEER_SUPERVISOR needs RUNNER_PEER_SECRET");
    expect(() => loadCoreConfig({ RUNNER_PEER_SECRET: "short" })).toThrow("at least 32 characters");
    expect(() => loadCoreConfig({ RUNNER_PEER_LISTEN: "runner:8063", RUNNER_PEER_SECRET: SECRET })).toThrow("RUNNER_PEER_LISTEN must be IP:port");
  });

  it("parses IPv4 and IPv6 addresses, bracketed or not (the last `:` is the port's), nothing else", () => {
    expect(parsePeerAddress("127.0.0.1:1")).toEqual({ host: "127.0.0.1", port: 1 });
    expect(parsePeerAddress("[fe80::1]:65535")).toEqual({ host: "fe80::1", port: 65535 });
    expect(parsePeerAddress("::1:80")).toEqual({ host: "::1", port: 80 });
    expect(parsePeerAddress("fd00:10:244::5:8065")).toEqual({ host: "fd00:10:244::5", port: 8065 });
    for (const bad of ["127.0.0.1", "127.0.0.1:0", "127.0.0.1:65536", "fd00::5:99999", "10.0.0.5:1:80", "[::1]", "host:80", ":80", "::80"]) expect(parsePeerAddress(bad)).toBeUndefined();
  });
});
