import { describe, expect, it } from "vitest";
import type { PortMapping } from "../../../src/contract/wire.ts";
import { sessionHttpRoutes, type HttpRouteInput } from "../../../src/kube/specs/http-route.ts";
import { sessionIngress, type IngressInput } from "../../../src/kube/specs/ingress.ts";
import { sessionService } from "../../../src/kube/specs/session-service.ts";
import { expectSchemaValid, SESSION_ID } from "../fixtures.ts";

const OWNER = { name: `telo-run-${SESSION_ID}`, uid: "5f0c7a52-1d2e-4a8b-9c3d-0e1f2a3b4c5d" };
const OWNER_REFERENCE = { apiVersion: "v1", kind: "Pod", name: OWNER.name, uid: OWNER.uid, controller: true };
const PORTS: PortMapping[] = [
  { port: 8080, protocol: "tcp" },
  { port: 5353, protocol: "udp" },
  { port: 3000, protocol: "tcp" },
];
const COMMON = { sessionId: SESSION_ID, namespace: "telo-sessions", managedBy: "telo-k8s-runner", ownerId: "runner-a", owner: OWNER };
const SESSION_LABELS = { "app.kubernetes.io/managed-by": "telo-k8s-runner", "telo.run/owner": "runner-a", "telo.run/session-id": SESSION_ID };

describe("sessionService", () => {
  it("publishes every declared port, tcp and udp, selecting the session's pod", () => {
    const service = sessionService({ ...COMMON, ports: PORTS });
    expect(service).toEqual({
      apiVersion: "v1",
      kind: "Service",
      metadata: {
        name: `telo-run-${SESSION_ID}`,
        namespace: "telo-sessions",
        labels: { "app.kubernetes.io/managed-by": "telo-k8s-runner", "telo.run/owner": "runner-a" },
        ownerReferences: [OWNER_REFERENCE],
      },
      spec: {
        selector: { "telo.run/session-id": SESSION_ID },
        ports: [
          { name: "p8080", port: 8080, targetPort: 8080, protocol: "TCP" },
          { name: "p5353-udp", port: 5353, targetPort: 5353, protocol: "UDP" },
          { name: "p3000", port: 3000, targetPort: 3000, protocol: "TCP" },
        ],
      },
    });
    expectSchemaValid(service);
  });

  it("names a port declared for both protocols apart", () => {
    const service = sessionService({ ...COMMON, ports: [{ port: 53, protocol: "tcp" }, { port: 53, protocol: "udp" }] });
    expect(service.spec?.ports?.map((p) => p.name)).toEqual(["p53", "p53-udp"]);
    expectSchemaValid(service);
  });
});

describe("sessionIngress", () => {
  const input: IngressInput = { ...COMMON, ports: PORTS, baseDomain: "run.example.com" };

  it("routes one host per tcp port through one Ingress, never udp", () => {
    const ingress = sessionIngress(input);
    const rule = (port: number) => ({
      host: `${port}-${SESSION_ID}.run.example.com`,
      http: {
        paths: [
          {
            path: "/",
            pathType: "Prefix",
            backend: { service: { name: `telo-run-${SESSION_ID}`, port: { number: port } } },
          },
        ],
      },
    });
    expect(ingress).toEqual({
      apiVersion: "networking.k8s.io/v1",
      kind: "Ingress",
      metadata: {
        name: `telo-run-${SESSION_ID}`,
        namespace: "telo-sessions",
        labels: SESSION_LABELS,
        ownerReferences: [OWNER_REFERENCE],
      },
      spec: { rules: [rule(8080), rule(3000)] },
    });
    expectSchemaValid(ingress!);
  });

  it("names the class and terminates TLS for every host when configured", () => {
    const ingress = sessionIngress({ ...input, ingressClass: "nginx", tlsSecret: "session-tls" });
    expect(ingress?.spec?.ingressClassName).toBe("nginx");
    expect(ingress?.spec?.tls).toEqual([
      { hosts: [`8080-${SESSION_ID}.run.example.com`, `3000-${SESSION_ID}.run.example.com`], secretName: "session-tls" },
    ]);
    expectSchemaValid(ingress!);
  });

  it("is absent when no tcp port is left to route", () => {
    expect(sessionIngress({ ...input, ports: [{ port: 5353, protocol: "udp" }], tlsSecret: "session-tls" })).toBeUndefined();
    expect(sessionIngress({ ...input, ports: [] })).toBeUndefined();
  });
});

describe("sessionHttpRoutes", () => {
  const input: HttpRouteInput = {
    ...COMMON,
    ports: PORTS,
    baseDomain: "run.example.com",
    version: "v1",
    gateway: { name: "public", namespace: "gateways" },
  };

  it("builds one route per tcp port attached to the Gateway", () => {
    const routes = sessionHttpRoutes(input);
    const route = (port: number) => ({
      apiVersion: "gateway.networking.k8s.io/v1",
      kind: "HTTPRoute",
      metadata: {
        name: `telo-run-${SESSION_ID}-${port}`,
        namespace: "telo-sessions",
        labels: SESSION_LABELS,
        ownerReferences: [OWNER_REFERENCE],
      },
      spec: {
        parentRefs: [{ group: "gateway.networking.k8s.io", kind: "Gateway", name: "public", namespace: "gateways" }],
        hostnames: [`${port}-${SESSION_ID}.run.example.com`],
        rules: [
          {
            matches: [{ path: { type: "PathPrefix", value: "/" } }],
            backendRefs: [{ name: `telo-run-${SESSION_ID}`, port }],
          },
        ],
      },
    });
    expect(routes).toEqual([route(8080), route(3000)]);
    for (const r of routes) expectSchemaValid(r);
  });

  it("names the listener when configured", () => {
    const [route] = sessionHttpRoutes({ ...input, gateway: { ...input.gateway, sectionName: "https" } });
    expect(route?.spec.parentRefs?.[0]?.sectionName).toBe("https");
    expectSchemaValid(route!);
  });

  it("speaks v1beta1 when that is the served version, with the same body", () => {
    const [v1] = sessionHttpRoutes(input);
    const [v1beta1] = sessionHttpRoutes({ ...input, version: "v1beta1" });
    expect(v1beta1).toEqual({ ...v1, apiVersion: "gateway.networking.k8s.io/v1beta1" });
  });

  it("has no routes when the session routes no tcp port", () => {
    expect(sessionHttpRoutes({ ...input, ports: [{ port: 5353, protocol: "udp" }] })).toEqual([]);
  });
});
