import { describe, expect, it } from "vitest";
import { ApiException } from "@kubernetes/client-node";
import {
  deadlineReason,
  httpRouteUnclaimedReason,
  httpRouteVerdict,
  ingressUnclaimedReason,
  ingressVerdict,
  routeReadErrorLine,
} from "../../../src/kube/status/route-health.ts";

const PARENT_REF = { group: "gateway.networking.k8s.io", kind: "Gateway", name: "public", namespace: "gateways" };

function condition(type: string, status: "True" | "False" | "Unknown", reason: string, message = "") {
  return { type, status, reason, message, observedGeneration: 1, lastTransitionTime: "2026-11-29T16:30:10Z" };
}

function routeWithParents(...parents: Array<ReturnType<typeof condition>[]>) {
  return {
    apiVersion: "gateway.networking.k8s.io/v1",
    kind: "HTTPRoute",
    metadata: { name: "telo-run-k7m3qx4r2abc-8080", namespace: "telo-sessions" },
    status: {
      parents: parents.map((conditions) => ({ parentRef: PARENT_REF, controllerName: "gateway.envoyproxy.io/gatewayclass-controller", conditions })),
    },
  };
}

describe("httpRouteVerdict", () => {
  it("is pending for a route not found or not yet seen by any controller", () => {
    expect(httpRouteVerdict(undefined)).toEqual({ state: "pending" });
    expect(httpRouteVerdict({ ...routeWithParents(), status: undefined })).toEqual({ state: "pending" });
    expect(httpRouteVerdict(routeWithParents())).toEqual({ state: "pending" });
  });

  it("is programmed once a parent accepts it with its references resolved", () => {
    expect(
      httpRouteVerdict(routeWithParents([condition("Accepted", "True", "Accepted"), condition("ResolvedRefs", "True", "ResolvedRefs")])),
    ).toEqual({ state: "programmed" });
  });

  it("is rejected with the first refusal's reason and message", () => {
    expect(
      httpRouteVerdict(
        routeWithParents([condition("Accepted", "False", "NotAllowedByListeners", "No listener allows routes from namespace telo-sessions")]),
      ),
    ).toEqual({ state: "rejected", reason: "NotAllowedByListeners: No listener allows routes from namespace telo-sessions" });
    expect(
      httpRouteVerdict(
        routeWithParents([condition("Accepted", "True", "Accepted"), condition("ResolvedRefs", "False", "BackendNotFound")]),
      ),
    ).toEqual({ state: "rejected", reason: "BackendNotFound" });
    expect(httpRouteVerdict(routeWithParents([condition("Accepted", "False", "")]))).toEqual({ state: "rejected", reason: "rejected" });
  });

  it("lets one accepting parent win over a sibling's refusal", () => {
    expect(
      httpRouteVerdict(
        routeWithParents([condition("Accepted", "False", "NoMatchingParent")], [condition("Accepted", "True", "Accepted")]),
      ),
    ).toEqual({ state: "programmed" });
  });

  it("stays pending while acceptance is unknown", () => {
    expect(httpRouteVerdict(routeWithParents([condition("Accepted", "Unknown", "Pending")]))).toEqual({ state: "pending" });
  });
});

describe("ingressVerdict", () => {
  const ingress = { apiVersion: "networking.k8s.io/v1", kind: "Ingress", metadata: { name: "telo-run-k7m3qx4r2abc" } };

  it("is programmed once the controller published an address, else pending, never rejected", () => {
    expect(ingressVerdict({ ...ingress, status: { loadBalancer: { ingress: [{ ip: "203.0.113.10" }] } } })).toEqual({ state: "programmed" });
    expect(ingressVerdict({ ...ingress, status: { loadBalancer: { ingress: [{ hostname: "lb.example.com" }] } } })).toEqual({ state: "programmed" });
    expect(ingressVerdict({ ...ingress, status: { loadBalancer: {} } })).toEqual({ state: "pending" });
    expect(ingressVerdict(undefined)).toEqual({ state: "pending" });
  });
});

describe("unclaimed reasons", () => {
  it("names the Ingress class, or its absence", () => {
    expect(ingressUnclaimedReason("nginx", "telo-sessions")).toBe(
      "no ingress controller claimed the session Ingress for class 'nginx'. Check that an Ingress controller is installed and watching namespace 'telo-sessions'.",
    );
    expect(ingressUnclaimedReason(undefined, "telo-sessions")).toBe(
      "no ingress controller claimed the session Ingress (no ingressClassName configured). Check that an Ingress controller is installed and watching namespace 'telo-sessions'.",
    );
  });

  it("names the Gateway and its listener", () => {
    expect(httpRouteUnclaimedReason({ name: "public", namespace: "gateways" }, "telo-sessions")).toBe(
      "no controller claimed the session HTTPRoute for Gateway 'gateways/public'. Check the Gateway exists, is programmed, and that a listener admits routes from namespace 'telo-sessions' (spec.listeners[].allowedRoutes.namespaces).",
    );
    expect(httpRouteUnclaimedReason({ name: "public", namespace: "gateways", sectionName: "https" }, "telo-sessions")).toBe(
      "no controller claimed the session HTTPRoute for Gateway 'gateways/public' (listener 'https'). Check the Gateway exists, is programmed, and that a listener admits routes from namespace 'telo-sessions' (spec.listeners[].allowedRoutes.namespaces).",
    );
  });

  it("blames a remembered read error at the deadline, else the unclaimed reason", () => {
    const forbidden = new ApiException(403, "", JSON.stringify({ kind: "Status", reason: "Forbidden", code: 403 }), {});
    expect(deadlineReason(forbidden, "unclaimed")).toBe(
      "route status could not be read: the runner is not permitted to do this (Forbidden, HTTP 403). The cluster operator must check the runner's RBAC.",
    );
    expect(deadlineReason(undefined, "unclaimed")).toBe("unclaimed");
    expect(routeReadErrorLine(forbidden)).toBe(
      "could not read route status: the runner is not permitted to do this (Forbidden, HTTP 403). The cluster operator must check the runner's RBAC.",
    );
  });
});
