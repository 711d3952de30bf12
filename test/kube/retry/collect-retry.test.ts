import { describe, expect, it } from "vitest";
import { COLLECT_ATTEMPTS, collectRetryPause } from "../../../src/kube/retry/collect-retry.ts";

const apiError = (code: number) => Object.assign(new Error(`HTTP ${code}`), { code });

describe("collectRetryPause", () => {
  it("retries 429, 5xx and an unanswered call with a doubling pause, capped", () => {
    expect(collectRetryPause(apiError(503), 1)).toBe(500);
    expect(collectRetryPause(apiError(429), 2)).toBe(1000);
    expect(collectRetryPause(new Error("ECONNREFUSED"), 3)).toBe(2000);
    expect(collectRetryPause(apiError(500), 7)).toBe(30_000);
  });

  it("never retries a refusal that will not pass", () => {
    for (const code of [400, 403, 409, 422]) expect(collectRetryPause(apiError(code), 1)).toBeUndefined();
  });

  it("gives up after the last attempt", () => {
    expect(collectRetryPause(apiError(503), COLLECT_ATTEMPTS)).toBeUndefined();
  });
});
