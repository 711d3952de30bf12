import { describe, expect, it } from "vitest";
import { runtimeClassVerdict } from "../../../src/kube/status/runtime-class.ts";

/** An ApiException as client-node raises it, with the apiserver's Status body. */
const apiError = (code: number, body: unknown) => Object.assign(new Error(`HTTP ${code}`), { code, body: JSON.stringify(body) });

describe("runtimeClassVerdict", () => {
  it("is present when the read succeeded", () => {
    expect(runtimeClassVerdict("gvisor", undefined)).toBe("present");
  });

  it("is missing only for a NotFound naming that RuntimeClass", () => {
    const notFound = apiError(404, {
      kind: "Status",
      apiVersion: "v1",
      status: "Failure",
      message: 'runtimeclasses.node.k8s.io "gvisor" not found',
      reason: "NotFound",
      details: { name: "gvisor", group: "node.k8s.io", kind: "runtimeclasses" },
      code: 404,
    });
    expect(runtimeClassVerdict("gvisor", notFound)).toBe("missing");
  });

  it("cannot tell from a resource the cluster does not serve, a refused read or an unreachable API", () => {
    expect(runtimeClassVerdict("gvisor", Object.assign(new Error("HTTP 404"), { code: 404, body: "404 page not found" }))).toBe("unknown");
    expect(runtimeClassVerdict("gvisor", apiError(404, { kind: "Status", reason: "NotFound", details: { kind: "pods", name: "gvisor" } }))).toBe("unknown");
    expect(runtimeClassVerdict("gvisor", apiError(403, { kind: "Status", reason: "Forbidden" }))).toBe("unknown");
    expect(runtimeClassVerdict("gvisor", new Error("ECONNREFUSED"))).toBe("unknown");
  });
});
