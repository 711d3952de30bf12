/**
 * The kwok scale section's pure parts (bench/kwok/): how Lease writes are counted from the audit
 * log and from the apiserver's metrics, and the fake nodes' loopback pod ranges. The section
 * itself needs root and a control plane (`npm run bench -- --only 10`).
 */
import { describe, expect, it } from "vitest";
import { fakeNode } from "../../bench/kwok/control-plane.ts";
import { countLeaseWrites, leaseWritesFromMetrics, podSubresourceRequests } from "../../bench/kwok/lease-writes.ts";

const audit = (verb: string, namespace: string, at: string, userAgent = "telo-k8s-runner/0.1.0 (replica kwok-replica-a)", tookMs = 5) =>
  JSON.stringify({
    verb,
    userAgent,
    requestReceivedTimestamp: at,
    stageTimestamp: new Date(Date.parse(at) + tookMs).toISOString(),
    objectRef: { resource: "leases", namespace, name: "x" },
  });

describe("countLeaseWrites", () => {
  const from = Date.parse("2026-12-02T10:00:00Z");
  const to = Date.parse("2026-12-02T10:01:00Z");

  it("counts the runner's writes in the window by replica and verb, and every namespace's in all", () => {
    const text = [
      audit("update", "telo-sessions", "2026-12-02T10:00:00.000001Z"),
      audit("update", "telo-sessions", "2026-12-02T10:00:30.5Z", "telo-k8s-runner/0.1.0 (replica kwok-replica-b)", 900),
      audit("create", "telo-sessions", "2026-12-02T10:00:59.999Z"),
      audit("update", "kube-system", "2026-12-02T10:00:10Z", "kube-apiserver/v1.36.3"),
      "",
    ].join("\n");
    expect(countLeaseWrites(text, from, to)).toEqual({
      runner: 3,
      all: 4,
      byReplica: { "kwok-replica-a": 2, "kwok-replica-b": 1 },
      byVerb: { update: 2, create: 1 },
      // a: writes at 0 s and 59.999 s; b: one at 30.5 s, so 30.5 s from the window's start.
      longestGapMs: { "kwok-replica-a": 59_999, "kwok-replica-b": 30_500 },
      latencyMs: { p99: 900, max: 900 },
    });
  });

  it("leaves out reads, other resources and writes outside the window", () => {
    const text = [
      audit("get", "telo-sessions", "2026-12-02T10:00:10Z"),
      audit("update", "telo-sessions", "2026-12-02T09:59:59.999Z"),
      audit("update", "telo-sessions", "2026-12-02T10:01:00Z"),
      JSON.stringify({ verb: "update", requestReceivedTimestamp: "2026-12-02T10:00:10Z", objectRef: { resource: "pods", namespace: "telo-sessions" } }),
    ].join("\n");
    expect(countLeaseWrites(text, from, to)).toMatchObject({ runner: 0, all: 0, byReplica: {}, byVerb: {}, longestGapMs: {} });
  });
});

describe("the apiserver's request counters", () => {
  const metrics = [
    "# HELP apiserver_request_total Counter of apiserver requests",
    "# TYPE apiserver_request_total counter",
    'apiserver_request_total{code="200",group="coordination.k8s.io",resource="leases",subresource="",verb="PUT"} 40',
    'apiserver_request_total{code="201",group="coordination.k8s.io",resource="leases",subresource="",verb="POST"} 2',
    'apiserver_request_total{code="200",group="coordination.k8s.io",resource="leases",subresource="",verb="LIST"} 99',
    'apiserver_request_total{code="500",group="",resource="pods",subresource="attach",verb="CONNECT"} 7',
    'apiserver_request_total{code="0",group="",resource="pods",subresource="attach",verb="CONNECT"} 3',
    'apiserver_request_total{code="400",group="",resource="pods",subresource="log",verb="CONNECT"} 5',
    // A family the section does not read, in a shape the plain parser would refuse, is skipped.
    "apiserver_storage_objects{resource=\"pods\"} 12 1733130000000",
  ].join("\n");

  it("counts Lease writes (POST, PUT, PATCH, DELETE), not reads", () => {
    expect(leaseWritesFromMetrics(metrics)).toBe(42);
  });

  it("counts a pod subresource's requests over every code", () => {
    expect(podSubresourceRequests(metrics, "attach")).toBe(10);
    expect(podSubresourceRequests(metrics, "log")).toBe(5);
  });
});

describe("fakeNode", () => {
  it("gives each node its own loopback /22 for its pods and the pod capacity asked for", () => {
    const nodes = [0, 1, 19, 64].map((index) => fakeNode(index, 600) as { spec: { podCIDR: string }; status: { allocatable: { pods: string } } });
    expect(nodes.map((node) => node.spec.podCIDR)).toEqual(["127.1.0.0/22", "127.1.4.0/22", "127.1.76.0/22", "127.2.0.0/22"]);
    expect(nodes.every((node) => node.status.allocatable.pods === "600")).toBe(true);
  });
});
