import { describe, expect, it } from "vitest";
import type { RunStatus } from "../../src/contract/wire.ts";
import { addedWithToken, base32, mintWorkloadToken, statusWithToken, WORKLOAD_TOKEN_PATTERN, type WorkloadToken } from "../../src/sessions/workload-token.ts";

describe("workload tokens", () => {
  it("encodes RFC 4648 base32, lowercase and unpadded", () => {
    // The RFC's own vectors, lowercased and without padding.
    expect(["", "f", "fo", "foo", "foob", "fooba", "foobar"].map((text) => base32(Buffer.from(text)))).toEqual(["", "my", "mzxq", "mzxw6", "mzxw6yq", "mzxw6ytb", "mzxw6ytboi"]);
  });

  it("mints 32 characters from 160 bits of the random source", () => {
    const sizes: number[] = [];
    const token = mintWorkloadToken((size) => {
      sizes.push(size);
      return Buffer.alloc(size, 0xff);
    });
    expect(sizes).toEqual([20]);
    expect(token).toBe("7".repeat(32));
    expect(mintWorkloadToken()).toMatch(WORKLOAD_TOKEN_PATTERN);
    expect(mintWorkloadToken()).not.toBe(mintWorkloadToken());
  });

  const running: RunStatus = {
    kind: "running",
    endpoints: [{ host: "", port: 3000, protocol: "tcp" }, { host: "", port: 53, protocol: "udp" }],
    agent: { host: "", port: 7000, protocol: "tcp" },
  };
  const token = (holder: WorkloadToken["holder"]): WorkloadToken => ({ env: "T", value: "t".repeat(32), holder });

  it("puts an app's token on every endpoint and an agent's on running.agent only", () => {
    const forApp = statusWithToken(running, token("app"));
    expect(forApp).toMatchObject({ endpoints: [{ token: "t".repeat(32) }, { token: "t".repeat(32) }] });
    expect(forApp.kind === "running" && forApp.agent).not.toHaveProperty("token");
    const forAgent = statusWithToken(running, token("agent"));
    expect(forAgent).toMatchObject({ agent: { token: "t".repeat(32) } });
    expect(forAgent.kind === "running" && forAgent.endpoints?.[0]).not.toHaveProperty("token");
  });

  it("leaves statuses other than running, and sessions without a token, as they are", () => {
    expect(statusWithToken({ kind: "stopped" }, token("app"))).toEqual({ kind: "stopped" });
    expect(statusWithToken(running, undefined)).toBe(running);
    expect(addedWithToken([{ host: "", port: 1, protocol: "tcp" }], token("agent"))).toEqual([{ host: "", port: 1, protocol: "tcp" }]);
    expect(addedWithToken([{ host: "", port: 1, protocol: "tcp" }], token("app"))).toEqual([{ host: "", port: 1, protocol: "tcp", token: "t".repeat(32) }]);
  });
});
