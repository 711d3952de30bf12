/**
 * What the kwok section needs on the machine: root (it runs a control plane), the control-plane
 * binaries test/cluster/build.sh caches, and kwok itself, built from its Go module into the same
 * cache (outside the checkout) the first time and reused after.
 */
import { execFile } from "node:child_process";
import { existsSync } from "node:fs";
import { mkdir } from "node:fs/promises";
import { homedir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { CACHE_DIR } from "../../test/cluster/fixture/cluster.ts";

const run = promisify(execFile);

export const KWOK_VERSION = "v0.8.0";
const KWOK_DIR = process.env.K8S_RUNNER_KWOK_DIR ?? join(homedir(), ".cache", "k8s-runner", "tools", `kwok-${KWOK_VERSION}`);
export const KWOK_BINARY = join(KWOK_DIR, "kwok");

/** The control-plane binaries this section runs (no kubelet, no node: kwok stands in for them). */
const CONTROL_PLANE = ["etcd", "kube-apiserver", "kube-controller-manager", "kube-scheduler"];

export const controlPlaneBinary = (name: string) => join(CACHE_DIR, "bin", name);

/** One line saying what is missing, or undefined when the section can run. */
export function missingForKwok(): string | undefined {
  if (process.getuid?.() !== 0) return "the kwok section runs a control plane and needs root";
  const missing = CONTROL_PLANE.map(controlPlaneBinary).filter((path) => !existsSync(path));
  if (missing.length > 0) return `missing ${missing.join(", ")}: run test/cluster/build.sh`;
  return undefined;
}

/**
 * The kwok binary, built with `go install` when absent. The build needs the Go toolchain and the
 * module proxy; a failed one says what go printed.
 */
export async function ensureKwok(progress: (text: string) => void): Promise<string> {
  if (existsSync(KWOK_BINARY)) return KWOK_BINARY;
  await mkdir(KWOK_DIR, { recursive: true });
  progress(`building kwok ${KWOK_VERSION} into ${KWOK_DIR} (once)…`);
  try {
    await run("go", ["install", `sigs.k8s.io/kwok/cmd/kwok@${KWOK_VERSION}`], {
      env: { ...process.env, GOBIN: KWOK_DIR },
      cwd: KWOK_DIR,
      maxBuffer: 16 << 20,
    });
  } catch (error) {
    const { stderr } = error as { stderr?: string };
    throw new Error(`go install sigs.k8s.io/kwok/cmd/kwok@${KWOK_VERSION} failed: ${stderr?.trim().split("\n").slice(-10).join("\n") ?? String(error)}`);
  }
  if (!existsSync(KWOK_BINARY)) throw new Error(`go install finished but ${KWOK_BINARY} is missing`);
  return KWOK_BINARY;
}
