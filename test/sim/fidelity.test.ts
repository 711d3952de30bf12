// Where a simulator is most easily wrong: behaviours of the real v1.36 apiserver and kubelet
// (shared notes, real-cluster.md "What the real apiserver does that a simulator may not"), each
// held here so the runner's tests meet them on the simulated cluster too.
import { Attach, NodeV1Api } from "@kubernetes/client-node";
import { PassThrough } from "node:stream";
import { describe, expect, it } from "vitest";
import { freshNamespace, pod, statusOf, useCluster, waitFor } from "./helpers.ts";

const c = useCluster();

describe("RuntimeClass", () => {
  it("serves node.k8s.io/v1 runtimeclasses and refuses a pod naming a missing one with the plugin's 403", async () => {
    const node = c.kc.makeApiClient(NodeV1Api);
    const ns = await freshNamespace(c);
    await node.createRuntimeClass({ body: { metadata: { name: "gvisor" }, handler: "runsc" } });
    expect((await node.listRuntimeClass()).items.map((r) => [r.metadata?.name, r.handler])).toEqual([["gvisor", "runsc"]]);
    await c.core.createNamespacedPod({ namespace: ns, body: pod("sandboxed", { spec: { runtimeClassName: "gvisor" } }) });

    // refused before validation, as the mutating plugin refuses it: the bad image does not matter
    const refused = await statusOf(c.core.createNamespacedPod({ namespace: ns, body: pod("kata", { spec: { runtimeClassName: "kata" }, container: { image: "" } }) }));
    expect(refused).toEqual({
      kind: "Status",
      apiVersion: "v1",
      metadata: {},
      status: "Failure",
      message: 'pods "kata" is forbidden: pod rejected: RuntimeClass "kata" not found',
      reason: "Forbidden",
      details: { name: "kata", kind: "pods" },
      code: 403,
    });
    const missingHandler = await statusOf(node.createRuntimeClass({ body: { metadata: { name: "bad" } } as never }));
    expect(missingHandler.code).toBe(422);
  });
});

describe("authorization of streaming subresources", () => {
  it("records a WebSocket attach as the apiserver authorizes it: get and create on pods/attach", async () => {
    const ns = await freshNamespace(c);
    await c.core.createNamespacedPod({ namespace: ns, body: pod("tty", { container: { stdin: true, tty: true } }) });
    await waitFor("running", async () => (await c.core.readNamespacedPod({ name: "tty", namespace: ns })).status?.phase === "Running");
    c.cluster.resetCounters();
    const ws = await new Attach(c.kc).attach(ns, "tty", "main", new PassThrough(), null, new PassThrough(), true);
    ws.close();
    expect(c.cluster.recordedRequests()).toEqual([
      { verb: "get", apiGroup: "", resource: "pods", subresource: "attach", namespace: ns },
      { verb: "create", apiGroup: "", resource: "pods", subresource: "attach", namespace: ns },
    ]);
    // the request itself is counted once, by its own verb
    expect(c.cluster.counters().requests).toEqual({ "get pods/attach": 1 });
  });
});
