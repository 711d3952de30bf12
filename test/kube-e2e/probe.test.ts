/**
 * `/v1/probe` through the runner's processes: with the session namespace in place and a kernel
 * image the cluster can run, the runner reports itself ready. Runs on both clusters; on the real
 * one the probe's reads meet the real authorizer as the runner's ServiceAccount.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type ClusterRunner, ON_REAL_CLUSTER, kubeSessionBody, startClusterRunner } from "../support/kube-runner.ts";

describe(`the probe on the ${ON_REAL_CLUSTER ? "real" : "simulated"} cluster`, () => {
  let runner: ClusterRunner;
  beforeAll(async () => {
    runner = await startClusterRunner();
  });
  afterAll(async () => {
    await runner?.close();
  });

  it("reports ready", async () => {
    // The kernel image session bodies name on this cluster.
    const image = kubeSessionBody().config?.image ?? "";
    expect(await runner.client.probe({ image, pullPolicy: "missing" })).toEqual({ status: "ready" });
  });
});
