// Fault injection and accounting, from the TypeScript API and from the HTTP control endpoint.
import { describe, expect, it } from "vitest";
import { freshNamespace, pod, statusOf, useCluster } from "./helpers.ts";
import { waitFor } from "../support/wait.ts";

const c = useCluster();

async function control(path: string, body?: unknown): Promise<{ status: number; json: unknown }> {
  const res = await fetch(`${c.cluster.url}/_sim/${path}`, {
    method: body === undefined ? "GET" : "POST",
    headers: { "content-type": "application/json" },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  return { status: res.status, json: await res.json() };
}

describe("faults and counters", () => {
  it("fails the next N matching requests with the given code, then recovers", async () => {
    const ns = await freshNamespace(c);
    c.cluster.faults.failNext({ verb: "create", resource: "pods", code: 500, count: 2 });
    const first = await statusOf(c.core.createNamespacedPod({ namespace: ns, body: pod("a") }));
    expect(first).toMatchObject({ code: 500, reason: "InternalError" });
    expect((await statusOf(c.core.createNamespacedPod({ namespace: ns, body: pod("a") }))).code).toBe(500);
    await c.core.createNamespacedPod({ namespace: ns, body: pod("a") });
    // Other verbs and resources were never affected.
    c.cluster.faults.failNext({ verb: "get", resource: "configmaps", code: 429 });
    await c.core.readNamespacedPod({ name: "a", namespace: ns });
    expect((await statusOf(c.core.readNamespacedConfigMap({ name: "x", namespace: ns }))).code).toBe(429);
  });

  it("adds latency to matching requests only, without failing them", async () => {
    const ns = await freshNamespace(c);
    c.cluster.faults.addLatency({ verb: "list", resource: "configmaps", ms: 3000 });
    const order: string[] = [];
    const slow = c.core.listNamespacedConfigMap({ namespace: ns }).then((l) => order.push(`list ${l.items.length}`));
    const fast = c.core.readNamespace({ name: ns }).then(() => order.push("get"));
    await Promise.all([slow, fast]);
    expect(order).toEqual(["get", "list 0"]);
    c.cluster.faults.clear();
  });

  it("makes a pod exit now, and deletes one behind the client's back", async () => {
    const ns = await freshNamespace(c);
    await c.core.createNamespacedPod({ namespace: ns, body: pod("p", { container: { stdin: true, tty: true } }) });
    await waitFor("running", async () => (await c.core.readNamespacedPod({ name: "p", namespace: ns })).status?.phase === "Running");
    expect(c.cluster.faults.exitPod(ns, "p", { exitCode: 7 })).toBe(true);
    const p = await waitFor("failed", async () => {
      const x = await c.core.readNamespacedPod({ name: "p", namespace: ns });
      return x.status?.phase === "Failed" ? x : undefined;
    });
    expect(p.status?.containerStatuses?.[0]?.state?.terminated).toMatchObject({ exitCode: 7, reason: "Error" });
    expect(c.cluster.faults.deletePod(ns, "p")).toBe(true);
    expect((await statusOf(c.core.readNamespacedPod({ name: "p", namespace: ns }))).code).toBe(404);
  });

  it("loses a 2xx answer on its way to a matching pod: the server answered, the pod's wget fails", async () => {
    const { createServer } = await import("node:http");
    let answered = 0;
    const server = createServer((req, res) => {
      if (req.url !== "/answer") return void res.writeHead(404).end();
      answered++;
      res.writeHead(200).end("the answer\n");
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", () => resolve()));
    const base = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
    try {
      const ns = await freshNamespace(c);
      c.cluster.faults.loseDownloads({ pod: "lossy", urlIncludes: "/answer" });
      // A refusal is not lost (the rule waits for a 2xx), the first answer is, the second arrives.
      const script = `wget -q -O /tmp/a "${base}/missing" || echo refused; wget -q -O /tmp/a "${base}/answer" || echo lost; wget -q -O /tmp/a "${base}/answer"; cat /tmp/a`;
      await c.core.createNamespacedPod({ namespace: ns, body: pod("lossy", { container: { command: ["sh", "-c", script] } }) });
      await waitFor("lossy to end", async () => (await c.core.readNamespacedPod({ name: "lossy", namespace: ns })).status?.phase === "Succeeded" || undefined);
      expect(await c.core.readNamespacedPodLog({ name: "lossy", namespace: ns })).toBe(
        "wget: server returned error: HTTP/1.1 404 Not Found\nrefused\nwget: connection closed prematurely\nlost\nthe answer\n",
      );
      expect(answered).toBe(2);
      expect(c.cluster.counters().lostDownloads).toBeGreaterThanOrEqual(1);
      // The rule was spent: another pod's downloads arrive.
      await c.core.createNamespacedPod({ namespace: ns, body: pod("plain", { container: { command: ["sh", "-c", `wget -q -O /tmp/a "${base}/answer"; cat /tmp/a`] } }) });
      await waitFor("plain to end", async () => (await c.core.readNamespacedPod({ name: "plain", namespace: ns })).status?.phase === "Succeeded" || undefined);
      expect(await c.core.readNamespacedPodLog({ name: "plain", namespace: ns })).toBe("the answer\n");
    } finally {
      await new Promise((resolve) => server.close(resolve));
    }
  });

  it("counts requests by verb and resource and records RBAC tuples", async () => {
    const ns = await freshNamespace(c);
    c.cluster.resetCounters();
    await c.core.createNamespacedPod({ namespace: ns, body: pod("counted", { container: { stdin: true } }) });
    await c.core.readNamespacedPod({ name: "counted", namespace: ns });
    await c.core.listNamespacedPod({ namespace: ns });
    await c.core.listNamespacedPod({ namespace: ns });
    await waitFor("running", async () => (await c.core.readNamespacedPod({ name: "counted", namespace: ns })).status?.phase === "Running");
    await c.core.readNamespacedPodLog({ name: "counted", namespace: ns });
    await c.networking.listIngressClass();
    const counts = c.cluster.counters().requests;
    expect(counts["create pods"]).toBe(1);
    expect(counts["list pods"]).toBe(2);
    expect(counts["get pods/log"]).toBe(1);
    expect(counts["list ingressclasses"]).toBe(1);
    const recorded = c.cluster.recordedRequests();
    expect(recorded[0]).toEqual({ verb: "create", apiGroup: "", resource: "pods", namespace: ns });
    expect(recorded).toContainEqual({ verb: "get", apiGroup: "", resource: "pods", subresource: "log", namespace: ns });
    expect(recorded).toContainEqual({ verb: "list", apiGroup: "networking.k8s.io", resource: "ingressclasses" });
  });

  it("keeps an audit record of each answered write: its object, the client's User-Agent and the status code", async () => {
    const ns = await freshNamespace(c);
    c.cluster.resetCounters();
    const call = (method: string, path: string, body?: unknown) =>
      fetch(`${c.cluster.url}/api/v1/namespaces/${ns}/configmaps${path}`, {
        method,
        headers: { "content-type": "application/json", "user-agent": "audit-test/1 (replica r-1)" },
        ...(body !== undefined && { body: JSON.stringify(body) }),
      });
    const configMap = { apiVersion: "v1", kind: "ConfigMap", metadata: { name: "audited" }, data: { a: "1" } };
    expect((await call("POST", "", configMap)).status).toBe(201);
    expect((await call("POST", "", configMap)).status).toBe(409);
    expect((await call("GET", "/audited")).status).toBe(200);
    expect((await call("DELETE", "/audited", { preconditions: { resourceVersion: "1" } })).status).toBe(409);
    expect((await call("DELETE", "/audited")).status).toBe(200);
    const expected = ["create 201", "create 409", "delete 409", "delete 200"];
    const audit = c.cluster.audit();
    expect(audit.map((w) => `${w.verb} ${w.code}`)).toEqual(expected);
    expect(audit[0]).toMatchObject({ resource: "configmaps", namespace: ns, userAgent: "audit-test/1 (replica r-1)" });
    expect(audit[0]?.name).toBeUndefined();
    expect(audit[3]).toMatchObject({ resource: "configmaps", namespace: ns, name: "audited" });
    expect(((await control("audit")).json as { verb: string; code: number }[]).map((w) => `${w.verb} ${w.code}`)).toEqual(expected);
  });

  it("exposes the same knobs over the HTTP control endpoint, validating bodies", async () => {
    const ns = await freshNamespace(c);
    expect((await control("faults/fail", { verb: "list", resource: "secrets", code: 503 })).status).toBe(200);
    expect((await statusOf(c.core.listNamespacedSecret({ namespace: ns }))).code).toBe(503);
    const bad = await control("faults/fail", { verb: "frobnicate", code: 200 });
    expect(bad.status).toBe(400);
    expect(String((bad.json as { error: string }).error)).toMatch(/verb/);

    await control("counters/reset", {});
    await c.core.listNamespacedConfigMap({ namespace: ns });
    const counters = (await control("counters")).json as { requests: Record<string, number>; openWatches: number };
    expect(counters.requests["list configmaps"]).toBe(1);
    expect(typeof counters.openWatches).toBe("number");

    await c.core.createNamespacedPod({ namespace: ns, body: pod("q", { container: { stdin: true } }) });
    await waitFor("running", async () => (await c.core.readNamespacedPod({ name: "q", namespace: ns })).status?.phase === "Running");
    expect((await control("pods/exit", { namespace: ns, name: "q", exitCode: 0 })).json).toEqual({ exited: true });
    await waitFor("succeeded", async () => (await c.core.readNamespacedPod({ name: "q", namespace: ns })).status?.phase === "Succeeded");
    expect((await control("pods/delete", { namespace: ns, name: "q" })).json).toEqual({ deleted: true });
    expect((await control("faults/drop-watches", {})).status).toBe(200);
    expect((await control("faults/expire-resource-versions", {})).status).toBe(200);
    expect((await control("faults/cut-attach", {})).json).toEqual({ cut: 0 });
    expect((await control("faults/lag-watches", { resource: "pods", ms: 0 })).status).toBe(200);
    expect((await control("faults/lag-watches", { ms: -1 })).status).toBe(400);
    expect((await control("faults/lose-downloads", { urlIncludes: "/nowhere" })).status).toBe(200);
    expect((await control("faults/lose-downloads", { count: 0 })).status).toBe(400);
    expect((await control("faults/clear", {})).status).toBe(200);
    expect((await control("requests")).status).toBe(200);
  });
});
