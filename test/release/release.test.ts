/**
 * `npm run release` (src/release/release.ts) twice from one commit: the same artifacts, byte for
 * byte, in folders at different places; SHA256SUMS that `sha256sum -c` accepts; an SBOM of the
 * production packages only.
 */
import { execFileSync } from "node:child_process";
import { mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { productionPackages } from "../../src/release/image-content.ts";
import { release, type ReleaseResult } from "../../src/release/release.ts";
import { helmBinary } from "../deploy/helm.ts";
import { REPO_ROOT } from "../deploy/render.ts";

const VERSION = (JSON.parse(await readFile(join(REPO_ROOT, "package.json"), "utf8")) as { version: string }).version;

/** The lockfile's packages marked dev: what `npm ci --omit=dev` leaves out. */
async function devOnlyPackages(): Promise<string[]> {
  const lock = JSON.parse(await readFile(join(REPO_ROOT, "package-lock.json"), "utf8")) as { packages: Record<string, { dev?: boolean }> };
  return Object.entries(lock.packages)
    .filter(([path, entry]) => path.startsWith("node_modules/") && entry.dev === true)
    .map(([path]) => path.slice(path.lastIndexOf("node_modules/") + "node_modules/".length));
}

describe("npm run release", () => {
  let scratch: string;
  const outs: string[] = [];
  const results: ReleaseResult[] = [];

  beforeAll(async () => {
    scratch = await mkdtemp(join(tmpdir(), "k8s-runner-release-"));
    const helm = helmBinary();
    for (const name of ["first", join("second", "nested")]) {
      const out = join(scratch, name);
      outs.push(out);
      results.push(await release({ root: REPO_ROOT, out, version: VERSION, helm, nodeBinary: process.execPath }));
    }
  }, 900_000);

  afterAll(async () => {
    if (scratch) await rm(scratch, { recursive: true, force: true });
  });

  it("writes the tarball, the image, the SBOM, the chart and their checksums", () => {
    expect(results[0]!.files.sort()).toEqual(
      [`k8s-runner-${VERSION}.tgz`, `k8s-runner-${VERSION}-image.tar`, `k8s-runner-${VERSION}-image.cdx.json`, `telo-k8s-runner-${VERSION}.tgz`, "SHA256SUMS"].sort(),
    );
    expect(results[0]!.skipped).toEqual([]);
    expect(execFileSync("sha256sum", ["-c", "SHA256SUMS"], { cwd: outs[0], encoding: "utf8" }).trim().split("\n")).toHaveLength(4);
  });

  it("gives the same bytes twice", async () => {
    const [first, second] = await Promise.all(outs.map((out) => readFile(join(out, "SHA256SUMS"), "utf8")));
    expect(second).toBe(first);
  });

  it("lists the image's packages in the SBOM, and no package only development needs", async () => {
    const bom = JSON.parse(await readFile(join(outs[0]!, `k8s-runner-${VERSION}-image.cdx.json`), "utf8")) as { bomFormat: string; components: Array<{ name: string; group?: string }> };
    const names = new Set(bom.components.map((component) => (component.group ? `${component.group}/${component.name}` : component.name)));
    const production = (await productionPackages(REPO_ROOT)).map((pkg) => pkg.path.slice(pkg.path.lastIndexOf("node_modules/") + "node_modules/".length));
    expect(bom.bomFormat).toBe("CycloneDX");
    expect(production.filter((name) => !names.has(name))).toEqual([]);
    // typescript is no such package: the lockfile has it devOptional (valibot's optional peer), so
    // `npm ci --omit=dev` keeps it and the image holds it.
    const devOnly = await devOnlyPackages();
    expect(devOnly).toEqual(expect.arrayContaining(["vitest", "tsx", "esbuild"]));
    expect(devOnly.filter((name) => names.has(name))).toEqual([]);
  });
});
