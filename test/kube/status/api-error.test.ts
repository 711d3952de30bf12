import { ApiException } from "@kubernetes/client-node";
import { describe, expect, it } from "vitest";
import {
  apiFailureMessage,
  apiReason,
  httpStatusOf,
  isConflict,
  isNotFound,
  statusBodyOf,
} from "../../../src/kube/status/api-error.ts";

function status(code: number, reason: string, message: string): string {
  return JSON.stringify({ kind: "Status", apiVersion: "v1", metadata: {}, status: "Failure", message, reason, code });
}

/** client-node 1.4 throws ApiException with the raw body text for error statuses. */
function apiException(code: number, body: string | undefined): ApiException<unknown> {
  return new ApiException(code, `HTTP-Code: ${code}\nMessage: Unknown API Status Code!\nBody: ${body}\nHeaders: {"audit-id":"a1"}`, body, {
    "audit-id": "a1",
  });
}

const QUOTA_403 = apiException(
  403,
  status(
    403,
    "Forbidden",
    'pods "telo-run-k7m3qx4r2abc" is forbidden: exceeded quota: telo-k8s-runner-sessions, requested: requests.cpu=500m, used: requests.cpu=16, limited: requests.cpu=16',
  ),
);
const RBAC_403 = apiException(
  403,
  status(
    403,
    "Forbidden",
    'pods is forbidden: User "system:serviceaccount:telo-runner:telo-k8s-runner" cannot create resource "pods" in API group "" in the namespace "telo-sessions"',
  ),
);
const PSA_403 = apiException(
  403,
  status(403, "Forbidden", 'pods "telo-run-k7m3qx4r2abc" is forbidden: violates PodSecurity "restricted:latest": runAsNonRoot != true'),
);

describe("httpStatusOf", () => {
  it("reads the status of every client generation, only when it is a real HTTP status", () => {
    expect(httpStatusOf(apiException(404, status(404, "NotFound", 'pods "x" not found')))).toBe(404);
    expect(httpStatusOf({ statusCode: 409 })).toBe(409);
    expect(httpStatusOf({ response: { statusCode: 500 } })).toBe(500);
    expect(httpStatusOf({ statusCode: "nope", code: 422 })).toBe(422);
    expect(httpStatusOf(Object.assign(new Error("connect ECONNREFUSED"), { code: "ECONNREFUSED" }))).toBeUndefined();
    expect(httpStatusOf(new DOMException("aborted", "AbortError"))).toBeUndefined();
    expect(httpStatusOf({ code: 20 })).toBeUndefined();
    expect(httpStatusOf({ code: 600 })).toBeUndefined();
    expect(httpStatusOf(new Error("boom"))).toBeUndefined();
    expect(httpStatusOf(undefined)).toBeUndefined();
  });

  it("classifies not-found and conflict", () => {
    expect(isNotFound(apiException(404, undefined))).toBe(true);
    expect(isConflict(apiException(409, status(409, "AlreadyExists", 'pods "x" already exists')))).toBe(true);
    expect(isNotFound(apiException(409, undefined))).toBe(false);
    expect(isConflict(new Error("boom"))).toBe(false);
  });
});

describe("statusBodyOf", () => {
  it("parses a raw JSON body and accepts an already parsed one", () => {
    expect(statusBodyOf(RBAC_403)).toMatchObject({ kind: "Status", reason: "Forbidden", code: 403 });
    expect(statusBodyOf({ body: { reason: "Conflict", code: 409 } })).toMatchObject({ reason: "Conflict" });
  });

  it("is undefined for a body that is not JSON, absent or not an object", () => {
    expect(statusBodyOf(apiException(502, "<html>Bad Gateway</html>"))).toBeUndefined();
    expect(statusBodyOf(apiException(401, undefined))).toBeUndefined();
    expect(statusBodyOf({ body: "42" })).toBeUndefined();
  });
});

describe("apiReason", () => {
  it("says the API could not be reached when there is no HTTP status", () => {
    expect(apiReason(Object.assign(new Error("connect ECONNREFUSED 10.0.0.1:443"), { code: "ECONNREFUSED" }))).toBe(
      "the Kubernetes API could not be reached",
    );
  });

  it("tells an exhausted quota from missing RBAC without echoing either message", () => {
    expect(apiReason(QUOTA_403)).toBe("the session namespace's resource quota is exhausted (Forbidden, HTTP 403)");
    expect(apiReason(RBAC_403)).toBe(
      "the runner is not permitted to do this (Forbidden, HTTP 403). The cluster operator must check the runner's RBAC.",
    );
    expect(apiReason(RBAC_403)).not.toContain("serviceaccount");
  });

  it("treats a bodiless 401 as a permission problem", () => {
    expect(apiReason(apiException(401, undefined))).toBe(
      "the runner is not permitted to do this (HTTP 401). The cluster operator must check the runner's RBAC.",
    );
  });

  it("reports other refusals by code and one-word reason only", () => {
    expect(apiReason(PSA_403)).toBe("the Kubernetes API rejected the request (Forbidden, HTTP 403)");
    expect(apiReason(apiException(422, status(422, "Invalid", 'Pod "x" is invalid: spec.containers[0].image: Required value')))).toBe(
      "the Kubernetes API rejected the request (Invalid, HTTP 422)",
    );
    expect(apiReason(apiException(429, status(429, "", "too many requests")))).toBe(
      "the Kubernetes API rejected the request (HTTP 429)",
    );
    expect(apiReason(apiException(503, "upstream connect error"))).toBe("the Kubernetes API rejected the request (HTTP 503)");
  });

  it("prefixes the failed action", () => {
    expect(apiFailureMessage("could not create the session pod", QUOTA_403)).toBe(
      "could not create the session pod: the session namespace's resource quota is exhausted (Forbidden, HTTP 403)",
    );
  });
});
