/**
 * The pods/attach client against the simulated cluster's attach endpoint, over real sockets.
 */
import { CoreV1Api } from "@kubernetes/client-node";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { attachContainer } from "../../../src/kube/io/attach.ts";
import { type SimulatedCluster, startSimulatedCluster } from "../../../src/sim/index.ts";
import { waitFor } from "../../support/wait.ts";

const NAMESPACE = "attach-test";

describe("attachContainer", () => {
  let sim: SimulatedCluster;
  beforeAll(async () => {
    sim = await startSimulatedCluster({ podStartDelayMs: 20, events: false });
    const core = sim.kubeConfig().makeApiClient(CoreV1Api);
    await core.createNamespace({ body: { metadata: { name: NAMESPACE } } });
    await core.createNamespacedPod({
      namespace: NAMESPACE,
      body: { metadata: { name: "tty" }, spec: { restartPolicy: "Never", containers: [{ name: "main", image: "busybox:1.36", stdin: true, tty: true }] } },
    });
    await waitFor("the pod to run", async () => (await core.readNamespacedPod({ namespace: NAMESPACE, name: "tty" })).status?.phase === "Running");
  });
  afterAll(() => sim?.stop());

  it("survives a heartbeat that comes due before a slow attach has opened", async () => {
    sim.faults.addLatency({ verb: "get", resource: "pods", subresource: "attach", ms: 400 });
    const output: Buffer[] = [];
    try {
      const attachment = await attachContainer(sim.kubeConfig(), {
        namespace: NAMESPACE,
        pod: "tty",
        container: "main",
        tty: true,
        heartbeatMs: 20,
        onOutput: (bytes) => output.push(bytes),
      });
      attachment.writeStdin(Buffer.from("still here\r"));
      await waitFor("the echo", () => Buffer.concat(output).toString().includes("still here"));
      attachment.close();
      expect(await attachment.closed).toEqual({});
    } finally {
      sim.faults.clear();
    }
  });
});
