/**
 * vitest globalSetup of `npm test`: provisions the servers the tests run that npm does not
 * install. The container registry of test/kube/build is built from distribution's Go module into
 * ~/.cache/k8s-runner by test/cluster/build.sh (at once when it is there already), so a fresh
 * machine needs only Go, not Debian's docker-registry.
 */
import { execFile } from "node:child_process";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import type { TestProject } from "vitest/node";

declare module "vitest" {
  export interface ProvidedContext {
    /** The registry server binary, or why there is none (the registry tests fail saying it). */
    registryBinary: { path: string } | { missing: string };
  }
}

const BUILD = fileURLToPath(new URL("../cluster/build.sh", import.meta.url));

export default async function setup(project: TestProject) {
  try {
    const { stdout } = await promisify(execFile)("bash", [BUILD, "registry"], { maxBuffer: 1 << 20 });
    const path = /^built (.+)$/m.exec(stdout)?.[1];
    project.provide("registryBinary", path ? { path } : { missing: `test/cluster/build.sh registry printed no path: ${stdout}` });
  } catch (error) {
    project.provide("registryBinary", {
      missing: `could not build the test registry (test/cluster/build.sh registry needs Go >= 1.24 on PATH and the Go module proxy): ${(error as Error).message.split("\n")[0]}`,
    });
  }
}
