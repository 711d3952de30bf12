import { describe, expect, it } from "vitest";
import { ATTACH_ATTEMPTS, attachRetryPause } from "../../../src/kube/retry/attach-retry.ts";

const apiError = (code: number) => Object.assign(new Error(`attach refused with HTTP ${code}`), { code });

describe("attachRetryPause", () => {
  it("retries what a restarting control plane answers, with a doubling pause up to eight times the first", () => {
    expect(attachRetryPause(apiError(403), 1, 1000)).toBe(1000);
    expect(attachRetryPause(apiError(401), 1, 1000)).toBe(1000);
    expect(attachRetryPause(apiError(500), 2, 1000)).toBe(2000);
    expect(attachRetryPause(apiError(503), 3, 1000)).toBe(4000);
    expect(attachRetryPause(apiError(429), 4, 1000)).toBe(8000);
    expect(attachRetryPause(Object.assign(new Error("connect ECONNREFUSED"), { code: "ECONNREFUSED" }), 5, 1000)).toBe(8000);
  });

  it("never retries a refusal that says the container or pod is no more", () => {
    for (const code of [400, 404, 409, 422]) expect(attachRetryPause(apiError(code), 1, 1000)).toBeUndefined();
  });

  it("gives up after the last attempt", () => {
    expect(attachRetryPause(apiError(403), ATTACH_ATTEMPTS - 1, 1000)).toBe(8000);
    expect(attachRetryPause(apiError(403), ATTACH_ATTEMPTS, 1000)).toBeUndefined();
  });
});
