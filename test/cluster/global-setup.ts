/**
 * vitest globalSetup of the real-cluster tier (`npm run test:cluster`): one cluster for the whole
 * run, handed to the tests through `inject("realCluster")`; after the run, RBAC is checked
 * against the audit log and the cluster is stopped and the machine restored.
 *
 * The apiserver belongs to this process, so a test restarts it through a small control endpoint
 * on loopback (`POST /apiserver/restart`).
 */
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import type { TestProject } from "vitest/node";
import { rbacFindings } from "./fixture/audit.ts";
import { IMAGES, RUNNER_NAMESPACE, RUNNER_SERVICE_ACCOUNT, RUNTIME_CLASS, startRealCluster } from "./fixture/cluster.ts";
import { GRANTS_THE_TIER_DOES_NOT_USE } from "./rbac-expectations.ts";

export interface RealClusterInfo {
  adminKubeconfig: string;
  runnerKubeconfig: string;
  hostAddress: string;
  controlUrl: string;
  kernelImage: string;
  initImage: string;
  runtimeClass: string;
}

declare module "vitest" {
  export interface ProvidedContext {
    realCluster: RealClusterInfo;
  }
}

export default async function setup(project: TestProject) {
  const cluster = await startRealCluster();
  const control = createServer((request, response) => {
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
    controlUrl: `http://127.0.0.1:${(control.address() as AddressInfo).port}`,
    kernelImage: IMAGES.kernel,
    initImage: IMAGES.busybox,
    runtimeClass: RUNTIME_CLASS,
  });

  return async () => {
    const findings = await rbacFindings(cluster.auditLog, { namespace: RUNNER_NAMESPACE, serviceAccount: RUNNER_SERVICE_ACCOUNT }).catch((error: Error) => error);
    await new Promise((resolve) => control.close(resolve));
    const problems = await cluster.stop();
    if (findings instanceof Error) throw findings;
    const expectedUnused = new Set(GRANTS_THE_TIER_DOES_NOT_USE.map(({ grant }) => JSON.stringify(grant)));
    const unused = findings.unused.filter((grant) => !expectedUnused.has(JSON.stringify(grant)));
    const failures = [
      ...problems.map((problem) => `the machine was not fully restored: ${problem}`),
      ...findings.forbidden.map((call) => `403 for ${call.verb} ${call.uri}`),
      ...findings.checkerDisagrees.map((call) => `allowed by the apiserver but not by test/deploy/rbac.ts: ${JSON.stringify(call)}`),
      ...unused.map((grant) => `granted by k8s/base but used by no call of the tier: ${JSON.stringify(grant)}`),
    ];
    console.log(`[real cluster] ${findings.calls} calls of the runner's ServiceAccount audited; ${failures.length} problems`);
    if (failures.length > 0) throw new Error(`after the real-cluster tier:\n${failures.join("\n")}`);
  };
}
