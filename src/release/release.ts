/**
 * `npm run release` (release-main.ts): every artifact of one version in one folder, each built so
 * that two builds of one commit are byte-identical (docs/package.md "Releasing"):
 *   - the npm tarball, packed from a staging copy of the package (npm fixes every entry's mtime);
 *   - the image archive (src/release/image.ts, already deterministic);
 *   - the Helm chart, `helm package`d and then rewritten with tar.ts, since helm stamps the
 *     time of packaging on every entry;
 *   - an SBOM of the image's production dependencies (CycloneDX's npm generator, `--output-reproducible`);
 *   - SHA256SUMS over them.
 * The build goes to a staging folder at a fixed place under the clone, not to dist/, so a release
 * never races a build or a pack in the clone, and source maps name the same relative paths.
 */
import { execFile } from "node:child_process";
import { createHash } from "node:crypto";
import { copyFile, mkdir, mkdtemp, readFile, readdir, rm, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { promisify } from "node:util";
import { gunzipSync, gzipSync } from "node:zlib";
import { buildRunner } from "./build.ts";
import { buildImage, DEFAULT_SESSION_IMAGE } from "./image.ts";
import { readTar, writeTar } from "./tar.ts";

const run = promisify(execFile);

export type ReleaseInput = {
  root: string;
  out: string;
  version: string;
  /** The helm binary; without one the chart is left out and the result says so. */
  helm: string | undefined;
  nodeBinary: string;
};

export type ReleaseResult = { files: string[]; skipped: string[] };

/** The files `npm pack` takes from the package, beside the build (package.json's `files`). */
const PACKAGE_FILES = ["package.json", "README.md", "LICENSE", "src/cli/bin.mjs"];

/** A copy of the package with a fresh build, at a fixed place so the build's bytes never depend on `out`. */
async function stagePackage(root: string): Promise<string> {
  const stage = join(root, ".tmp", "release-stage");
  await rm(stage, { recursive: true, force: true });
  await mkdir(join(stage, "src/cli"), { recursive: true });
  for (const file of PACKAGE_FILES) await copyFile(join(root, file), join(stage, file));
  await buildRunner({ root, outDir: join(stage, "dist"), sourceMaps: true }, true);
  return stage;
}

/** npm pack of the staging copy; its prepack (a build) is skipped, the copy holds one already. */
async function npmTarball(stage: string, out: string): Promise<string> {
  const { stdout } = await run("npm", ["pack", "--json", "--ignore-scripts", "--pack-destination", out], { cwd: stage, maxBuffer: 64 * 1024 * 1024 });
  const [report] = JSON.parse(stdout) as Array<{ filename: string }>;
  return report!.filename;
}

async function imageArchiveFile(input: ReleaseInput, stage: string): Promise<string> {
  const image = await buildImage({
    root: input.root,
    distDir: join(stage, "dist"),
    nodeBinary: input.nodeBinary,
    ref: `telorun/k8s-runner:${input.version}`,
    sessionImage: DEFAULT_SESSION_IMAGE,
    version: input.version,
  });
  const name = `k8s-runner-${input.version}-image.tar`;
  await writeFile(join(input.out, name), image.archive);
  return name;
}

/** `helm package` of k8s/chart, its entries then written again without helm's timestamps. */
async function helmChart(input: ReleaseInput & { helm: string }): Promise<string> {
  const scratch = await mkdtemp(join(input.out, ".helm-"));
  try {
    await run(input.helm, ["package", join(input.root, "k8s/chart"), "--destination", scratch]);
    const [name] = await readdir(scratch);
    const entries = readTar(gunzipSync(await readFile(join(scratch, name!))));
    await writeFile(join(input.out, name!), gzipSync(writeTar(entries), { level: 9 }));
    return name!;
  } finally {
    await rm(scratch, { recursive: true, force: true });
  }
}

/**
 * The SBOM generator, pinned. Run through npx rather than kept as a dev dependency: its optional
 * XML validator pulls node-gyp, whose tree satisfies client-node's optional `encoding` peer, and
 * the lockfile would then put `encoding` and iconv-lite among the production packages: into the
 * image, and 0.5 MiB into the supervisor's bundle.
 */
export const CYCLONEDX_NPM = "@cyclonedx/cyclonedx-npm@6.0.1";

/** CycloneDX SBOM of the packages `npm ci --omit=dev` installs, which are the image's. */
async function sbom(input: ReleaseInput): Promise<string> {
  const name = `k8s-runner-${input.version}-image.cdx.json`;
  const args = ["--yes", "--prefer-offline", CYCLONEDX_NPM, "--omit", "dev", "--output-reproducible", "--output-format", "JSON", "--output-file", join(input.out, name), join(input.root, "package.json")];
  await run("npx", args, { cwd: input.root, maxBuffer: 64 * 1024 * 1024 });
  return name;
}

/** `sha256sum -c` reads this: one `<hex>  <name>` line per file, sorted by name. */
export async function writeChecksums(out: string, files: readonly string[]): Promise<void> {
  const lines: string[] = [];
  for (const file of [...files].sort()) lines.push(`${createHash("sha256").update(await readFile(join(out, file))).digest("hex")}  ${file}`);
  await writeFile(join(out, "SHA256SUMS"), `${lines.join("\n")}\n`);
}

export async function release(input: ReleaseInput): Promise<ReleaseResult> {
  await rm(input.out, { recursive: true, force: true });
  await mkdir(input.out, { recursive: true });
  const stage = await stagePackage(input.root);
  const files = [await npmTarball(stage, input.out), await imageArchiveFile(input, stage), await sbom(input)];
  const skipped: string[] = [];
  if (input.helm) files.push(await helmChart({ ...input, helm: input.helm }));
  else skipped.push("the Helm chart: no helm binary (test/deploy/helm.sh builds one)");
  await writeChecksums(input.out, files);
  await rm(stage, { recursive: true, force: true });
  return { files: [...files, "SHA256SUMS"], skipped };
}
