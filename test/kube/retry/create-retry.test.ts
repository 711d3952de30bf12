import { describe, expect, it } from "vitest";
import { CREATE_ATTEMPTS, createRetryPause } from "../../../src/kube/retry/create-retry.ts";

const NOW = 1_000_000;
const FAR = NOW + 120_000;
const apiError = (code: number) => Object.assign(new Error(`HTTP ${code}`), { code });

describe("createRetryPause", () => {
  it("retries 429 and 5xx with a doubling pause", () => {
    expect(createRetryPause(apiError(429), 1, NOW, FAR)).toBe(250);
    expect(createRetryPause(apiError(500), 2, NOW, FAR)).toBe(500);
    expect(createRetryPause(apiError(503), 3, NOW, FAR)).toBe(1000);
  });

  it("never retries a refusal that will not pass", () => {
    for (const code of [400, 403, 404, 409, 422]) expect(createRetryPause(apiError(code), 1, NOW, FAR)).toBeUndefined();
  });

  it("retries a call that got no answer (its deadline passed, the connection was cut or refused): the pod may exist, which the retry finds out", () => {
    expect(createRetryPause(new Error("the pod create call did not answer within 30s"), 1, NOW, FAR)).toBe(250);
    expect(createRetryPause(Object.assign(new Error("socket hang up"), { code: "ECONNRESET" }), 2, NOW, FAR)).toBe(500);
  });

  it("gives up after the last attempt and before the start deadline", () => {
    expect(createRetryPause(apiError(500), CREATE_ATTEMPTS, NOW, FAR)).toBeUndefined();
    expect(createRetryPause(apiError(500), 1, NOW, NOW + 250)).toBeUndefined();
  });
});
