import type { V1Service } from "@kubernetes/client-node";
import { describe, expect, it } from "vitest";
import { replacementOf, serviceReplacement } from "../../../src/kube/specs/replacement.ts";
import { sessionService } from "../../../src/kube/specs/session-service.ts";
import { sessionHttpRoutes } from "../../../src/kube/specs/http-route.ts";
import { expectSchemaValid, SESSION_ID } from "../fixtures.ts";

const COMMON = {
  sessionId: SESSION_ID,
  namespace: "telo-sessions",
  managedBy: "telo-k8s-runner",
  ownerId: "default",
  owner: { name: `telo-watch-${SESSION_ID}-b`, uid: "uid-b" },
};

describe("create-or-replace bodies", () => {
  it("replaces a Service with the new ports and owner, keeping resourceVersion and cluster IPs", () => {
    const existing: V1Service = {
      ...sessionService({ ...COMMON, owner: { name: `telo-watch-${SESSION_ID}-a`, uid: "uid-a" }, ports: [{ port: 8080, protocol: "tcp" }] }),
      metadata: { name: `telo-run-${SESSION_ID}`, resourceVersion: "4711", uid: "svc-uid" },
      spec: { clusterIP: "10.96.12.34", clusterIPs: ["10.96.12.34"], ports: [] },
    };
    const desired = sessionService({ ...COMMON, ports: [{ port: 8080, protocol: "tcp" }, { port: 9090, protocol: "tcp" }] });
    const replacement = serviceReplacement(desired, existing);
    expect(replacement).toEqual({
      ...desired,
      metadata: { ...desired.metadata, resourceVersion: "4711" },
      spec: { ...desired.spec, clusterIP: "10.96.12.34", clusterIPs: ["10.96.12.34"] },
    });
    expectSchemaValid(replacement);
  });

  it("replaces a route with the existing resourceVersion only", () => {
    const [route] = sessionHttpRoutes({
      ...COMMON,
      ports: [{ port: 8080, protocol: "tcp" }],
      baseDomain: "run.example.com",
      version: "v1",
      gateway: { name: "public", namespace: "gateways" },
    });
    const existing = { ...route!, metadata: { ...route!.metadata, resourceVersion: "99", generation: 3 } };
    const replacement = replacementOf(route!, existing);
    expect(replacement).toEqual({ ...route, metadata: { ...route!.metadata, resourceVersion: "99" } });
    expectSchemaValid(replacement);
  });
});
