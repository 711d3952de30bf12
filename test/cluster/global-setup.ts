/**
 * vitest globalSetup of the real-cluster tier (`npm run test:cluster`): one cluster for the whole
 * run, handed to the tests through `inject("realCluster")`; after the run the cluster is stopped
 * and the machine restored.
 *
 * The apiserver belongs to this process, so a test restarts it through a small control endpoint
 * on loopback (`POST /apiserver/restart`); the in-cluster files turn NetworkPolicy enforcement on
 * the same way (`POST /network-policy/enforce`, test/cluster/fixture/network-policy.ts).
 */
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import type { TestProject } from "vitest/node";
import { IMAGES, RUNTIME_CLASS, startRealCluster } from "./fixture/cluster.ts";

export interface RealClusterInfo {
  adminKubeconfig: string;
  runnerKubeconfig: string;
  hostAddress: string;
  containerdSocket: string;
  controlUrl: string;
  kernelImage: string;
  initImage: string;
  runtimeClass: string;
  auditLog: string;
  apiserverRestarts: string;
}

declare module "vitest" {
  export interface ProvidedContext {
    realCluster: RealClusterInfo;
  }
}

export default async function setup(project: TestProject) {
  const cluster = await startRealCluster();
  const control = createServer((request, response) => {
    if (request.method === "POST" && request.url === "/network-policy/enforce") {
      cluster.enforceNetworkPolicy().then(
        () => response.writeHead(204).end(),
        (error: Error) => response.writeHead(500).end(error.message),
      );
      return;
    }
    if (request.method === "POST" && request.url === "/apiserver/restart") {
      cluster.restartApiserver().then(
        () => response.writeHead(204).end(),
        (error: Error) => response.writeHead(500).end(error.message),
      );
      return;
    }
    response.writeHead(404).end();
  });
  await new Promise<void>((resolve) => control.listen(0, "127.0.0.1", resolve));
  project.provide("realCluster", {
    adminKubeconfig: cluster.adminKubeconfig,
    runnerKubeconfig: cluster.runnerKubeconfig,
    hostAddress: cluster.hostAddress,
    containerdSocket: cluster.containerdSocket,
    controlUrl: `http://127.0.0.1:${(control.address() as AddressInfo).port}`,
    kernelImage: IMAGES.kernel,
    initImage: IMAGES.busybox,
    runtimeClass: RUNTIME_CLASS,
    auditLog: cluster.auditLog,
    apiserverRestarts: cluster.apiserverRestarts,
  });

  // The RBAC findings are tests of their own (rbac-audit.test.ts); a machine left changed is
  // reported here, after the cluster stopped, and fails the run through the exit code.
  return async () => {
    await new Promise((resolve) => control.close(resolve));
    const problems = await cluster.stop();
    if (problems.length > 0) {
      console.error(`[real cluster] the machine was not fully restored:\n${problems.join("\n")}`);
      process.exitCode = 1;
    }
  };
}
