import { ApiException, type V1APIGroup, type V1IngressClass } from "@kubernetes/client-node";
import { describe, expect, it } from "vitest";
import type { RoutingConfig } from "../../../src/config/kube.ts";
import {
  gatewayApiVersion,
  resolveRouting,
  routingLogEntry,
  routingNeedsProbe,
  type RoutingProbe,
} from "../../../src/kube/routing/resolution.ts";

const CONFIG: RoutingConfig = {
  mode: "auto",
  baseDomain: "run.example.com",
  readyTimeoutSeconds: 60,
  sessionNamespace: "telo-sessions",
  ingressClass: undefined,
  tlsSecret: undefined,
  gatewayName: undefined,
  gatewayNamespace: "telo-sessions",
  gatewaySectionName: undefined,
};

function gatewayGroup(...versions: string[]): V1APIGroup {
  return {
    name: "gateway.networking.k8s.io",
    versions: versions.map((version) => ({ groupVersion: `gateway.networking.k8s.io/${version}`, version })),
    preferredVersion: { groupVersion: `gateway.networking.k8s.io/${versions[0]}`, version: versions[0]! },
  };
}

function ingressClass(name: string, isDefault = false): V1IngressClass {
  return {
    apiVersion: "networking.k8s.io/v1",
    kind: "IngressClass",
    metadata: { name, ...(isDefault && { annotations: { "ingressclass.kubernetes.io/is-default-class": "true" } }) },
    spec: { controller: `k8s.io/${name}` },
  };
}

const FORBIDDEN = new ApiException(403, "", JSON.stringify({ kind: "Status", reason: "Forbidden", code: 403 }), {});

function probe(gateway: V1APIGroup | undefined, classes: V1IngressClass[] | "error"): RoutingProbe {
  return {
    gatewayApiGroup: gateway,
    ingressClasses: classes === "error" ? { ok: false, error: FORBIDDEN } : { ok: true, items: classes },
  };
}

const NOTHING = probe(undefined, []);
const GATEWAY_ONLY = probe(gatewayGroup("v1", "v1beta1"), []);
const NGINX = probe(undefined, [ingressClass("nginx")]);

describe("gatewayApiVersion", () => {
  it("prefers v1, then v1beta1, then the group's preferred version", () => {
    expect(gatewayApiVersion(gatewayGroup("v1beta1", "v1"))).toBe("v1");
    expect(gatewayApiVersion(gatewayGroup("v1alpha2", "v1beta1"))).toBe("v1beta1");
    expect(gatewayApiVersion(gatewayGroup("v1alpha2"))).toBe("v1alpha2");
    expect(gatewayApiVersion(undefined)).toBeUndefined();
  });
});

describe("resolveRouting", () => {
  it("is logs-only in mode none or without a base domain, without probing", () => {
    expect(routingNeedsProbe({ ...CONFIG, mode: "none" })).toBe(false);
    expect(resolveRouting({ ...CONFIG, mode: "none" })).toEqual({ layer: "none", reason: "SESSION_ROUTING_MODE=none" });
    expect(routingNeedsProbe({ ...CONFIG, baseDomain: undefined })).toBe(false);
    expect(resolveRouting({ ...CONFIG, mode: "gateway", gatewayName: "public", baseDomain: undefined })).toEqual({
      layer: "none",
      reason: "SESSION_ROUTING_BASE_DOMAIN is unset, so no session host can be constructed",
    });
    expect(routingNeedsProbe(CONFIG)).toBe(true);
  });

  it("takes Ingress in mode ingress without any check", () => {
    expect(resolveRouting({ ...CONFIG, mode: "ingress", tlsSecret: "tls" }, GATEWAY_ONLY)).toEqual({
      layer: "ingress",
      baseDomain: "run.example.com",
      tlsSecret: "tls",
    });
  });

  it("takes the Gateway API in mode gateway at the served version, or refuses", () => {
    const config = { ...CONFIG, mode: "gateway" as const, gatewayName: "public", gatewayNamespace: "gateways", gatewaySectionName: "https" };
    expect(resolveRouting(config, probe(gatewayGroup("v1beta1"), []))).toEqual({
      layer: "gateway",
      baseDomain: "run.example.com",
      version: "v1beta1",
      gateway: { name: "public", namespace: "gateways", sectionName: "https" },
    });
    expect(resolveRouting(config, NGINX)).toEqual({
      refusal:
        "SESSION_ROUTING_MODE=gateway but the cluster does not serve 'gateway.networking.k8s.io'. Install the Gateway API CRDs, or set SESSION_ROUTING_MODE=ingress.",
    });
  });

  describe("auto", () => {
    it("follows a configured Gateway name first, refusing when the API is not served", () => {
      expect(resolveRouting({ ...CONFIG, gatewayName: "public", ingressClass: "nginx" }, probe(gatewayGroup("v1"), [ingressClass("nginx", true)]))).toEqual({
        layer: "gateway",
        baseDomain: "run.example.com",
        version: "v1",
        gateway: { name: "public", namespace: "telo-sessions" },
      });
      expect(resolveRouting({ ...CONFIG, gatewayName: "public" }, NGINX)).toEqual({
        refusal:
          "SESSION_GATEWAY_NAME is set but the cluster does not serve 'gateway.networking.k8s.io'. Install the Gateway API CRDs, or unset SESSION_GATEWAY_NAME to route via Ingress.",
      });
    });

    it("refuses a TLS secret once the Gateway API is chosen", () => {
      expect(resolveRouting({ ...CONFIG, gatewayName: "public", tlsSecret: "tls" }, GATEWAY_ONLY)).toEqual({
        refusal:
          "SESSION_INGRESS_TLS_SECRET is set but session routing resolved to Gateway API. Under Gateway API the origin certificate belongs to the Gateway listener's own `tls.certificateRefs`, not to the per-session route, so this Secret would be silently ignored. Move the reference to the Gateway and unset this, or set SESSION_ROUTING_MODE=ingress.",
      });
    });

    it("follows a configured IngressClass, then a default-marked one, even where Gateway is served", () => {
      expect(resolveRouting({ ...CONFIG, ingressClass: "nginx" }, GATEWAY_ONLY)).toEqual({
        layer: "ingress",
        baseDomain: "run.example.com",
        ingressClass: "nginx",
      });
      expect(resolveRouting(CONFIG, probe(gatewayGroup("v1"), [ingressClass("traefik"), ingressClass("nginx", true)]))).toEqual({
        layer: "ingress",
        baseDomain: "run.example.com",
      });
    });

    it("refuses to choose between the Gateway API and unmarked IngressClasses", () => {
      expect(resolveRouting(CONFIG, probe(gatewayGroup("v1"), [ingressClass("nginx"), ingressClass("traefik")]))).toEqual({
        refusal:
          "SESSION_ROUTING_MODE=auto cannot choose: this cluster serves 'gateway.networking.k8s.io' AND has 2 IngressClass(es) with none marked default, and nothing says which should carry session traffic. Set SESSION_ROUTING_MODE=ingress (with SESSION_INGRESS_CLASS) or SESSION_ROUTING_MODE=gateway (with SESSION_GATEWAY_NAME).",
      });
    });

    it("refuses the Gateway API without a Gateway name", () => {
      const expected = {
        refusal:
          "SESSION_ROUTING_MODE=auto resolved to Gateway API, but SESSION_GATEWAY_NAME is unset — a route has to name the Gateway it attaches to, and picking one of several would fail as silently as publishing none. Set SESSION_GATEWAY_NAME (and SESSION_GATEWAY_NAMESPACE when the Gateway is not in 'telo-sessions').",
      };
      expect(resolveRouting(CONFIG, GATEWAY_ONLY)).toEqual(expected);
      expect(resolveRouting(CONFIG, probe(gatewayGroup("v1"), "error"))).toEqual(expected);
    });

    it("takes Ingress when only IngressClasses exist", () => {
      expect(resolveRouting({ ...CONFIG, tlsSecret: "tls" }, NGINX)).toEqual({
        layer: "ingress",
        baseDomain: "run.example.com",
        tlsSecret: "tls",
      });
    });

    it("refuses when nothing is usable, never reading a failed list as no IngressClass", () => {
      expect(resolveRouting(CONFIG, NOTHING)).toEqual({
        refusal:
          "SESSION_ROUTING_BASE_DOMAIN is set but this cluster offers no usable routing layer: no IngressClass exists and 'gateway.networking.k8s.io' is not served. Install an Ingress controller or the Gateway API, or set SESSION_ROUTING_MODE=none to run logs-only.",
      });
      expect(resolveRouting(CONFIG, probe(undefined, "error"))).toEqual({
        refusal:
          "SESSION_ROUTING_BASE_DOMAIN is set but the routing layer could not be resolved: listing IngressClasses failed (the runner is not permitted to do this (Forbidden, HTTP 403). The cluster operator must check the runner's RBAC.) and 'gateway.networking.k8s.io' is not served. Grant `list` on `ingressclasses`, or set SESSION_ROUTING_MODE explicitly.",
      });
    });
  });

  it("needs the probe once a base domain is set", () => {
    expect(() => resolveRouting(CONFIG)).toThrow("resolveRouting needs the cluster probe");
  });
});

describe("routingLogEntry", () => {
  it("warns about logs-only and says which layer was resolved", () => {
    expect(routingLogEntry({ layer: "none", reason: "SESSION_ROUTING_MODE=none" })).toEqual({
      level: "warn",
      message: "session routing disabled (logs-only)",
      fields: { reason: "SESSION_ROUTING_MODE=none" },
    });
    expect(routingLogEntry({ layer: "ingress", baseDomain: "run.example.com" })).toEqual({
      level: "info",
      message: "session routing resolved",
      fields: { layer: "ingress", ingressClass: "(cluster default)", baseDomain: "run.example.com" },
    });
    expect(
      routingLogEntry({ layer: "gateway", baseDomain: "run.example.com", version: "v1", gateway: { name: "public", namespace: "gateways" } }),
    ).toEqual({
      level: "info",
      message: "session routing resolved",
      fields: { layer: "gateway", apiVersion: "gateway.networking.k8s.io/v1", gateway: "gateways/public", baseDomain: "run.example.com" },
    });
  });
});
