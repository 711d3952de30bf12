/**
 * Tests mirror the source folders: a test of `src/<folder>/x.ts` lives in `test/<folder>/`, so
 * the tests of a module are found where the module is. The tiers that cut across folders (a
 * process, a cluster, the shared support) are the exceptions, named here.
 */
import { readdirSync, statSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";

const REPO_ROOT = fileURLToPath(new URL("../../", import.meta.url));
// monitoring: the dashboard and alerts of k8s/ against the runner's /metrics (docs/monitoring.md).
const TIERS = ["kube-e2e", "hardening", "deploy", "cluster", "support", "sim", "core", "cli", "unit", "stress", "package", "monitoring"];

function folders(dir: string): string[] {
  return readdirSync(`${REPO_ROOT}${dir}`)
    .filter((name) => statSync(`${REPO_ROOT}${dir}/${name}`).isDirectory())
    .flatMap((name) => [`${dir}/${name}`, ...folders(`${dir}/${name}`)]);
}

function sourceFolderExists(folder: string): boolean {
  try {
    return statSync(`${REPO_ROOT}${folder}`).isDirectory();
  } catch {
    return false;
  }
}

describe("the test tree", () => {
  const mirrored = folders("test").filter((folder) => !TIERS.includes(folder.split("/")[1]!));

  it("has mirrored folders to check", () => {
    expect(mirrored).toEqual(expect.arrayContaining(["test/kube", "test/kube/routing", "test/contract"]));
  });

  it("mirrors the source tree outside its cross-cutting tiers", () => {
    expect(mirrored.filter((folder) => !sourceFolderExists(folder.replace(/^test\//, "src/")))).toEqual([]);
  });
});
