import { describe, expect, it } from "vitest";
import { runtimeClassVerdict } from "../../../src/kube/status/runtime-class.ts";

/** An ApiException as client-node raises it, with the apiserver's Status body. */
const apiError = (code: number, body: unknown) => Object.assign(new Error(`HTTP ${code}`), { code, body: JSON.stringify(body) });

describe("runtimeClassVerdict", () => {
  it("is present when the dry-run pod was admitted", () => {
    expect(runtimeClassVerdict("gvisor", undefined)).toBe("present");
  });

  it("is missing for the RuntimeClass admission's refusal of that name", () => {
    const refused = apiError(403, {
      kind: "Status",
      apiVersion: "v1",
      status: "Failure",
      message: 'pods "telo-runtime-class-check" is forbidden: pod rejected: RuntimeClass "gvisor" not found',
      reason: "Forbidden",
      details: { name: "telo-runtime-class-check", kind: "pods" },
      code: 403,
    });
    expect(runtimeClassVerdict("gvisor", refused)).toBe("missing");
  });

  it("cannot tell from another refusal, another class's refusal or an unreachable API", () => {
    const quota = apiError(403, { kind: "Status", reason: "Forbidden", message: 'pods "telo-runtime-class-check" is forbidden: exceeded quota: sessions' });
    expect(runtimeClassVerdict("gvisor", quota)).toBe("unknown");
    const other = apiError(403, { kind: "Status", reason: "Forbidden", message: 'pod rejected: RuntimeClass "kata" not found' });
    expect(runtimeClassVerdict("gvisor", other)).toBe("unknown");
    expect(runtimeClassVerdict("gvisor", apiError(422, { kind: "Status", reason: "Invalid" }))).toBe("unknown");
    expect(runtimeClassVerdict("gvisor", new Error("ECONNREFUSED"))).toBe("unknown");
  });
});
