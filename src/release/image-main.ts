/**
 * `npm run image [-- --tag REF] [--out FILE] [--node BINARY] [--session-image REF]`: builds dist/
 * afresh (`npm run build`) and writes the runner's image archive (src/release/image.ts), then
 * prints where, its digest and its size. Load it with `ctr -n k8s.io images import FILE` or
 * `docker load -i FILE`.
 */
import { mkdir, readFile, rm, writeFile } from "node:fs/promises";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import { buildRunner } from "./build.ts";
import { buildImage, DEFAULT_SESSION_IMAGE } from "./image.ts";

const root = fileURLToPath(new URL("../..", import.meta.url));
const { version } = JSON.parse(await readFile(join(root, "package.json"), "utf8")) as { version: string };
const { values } = parseArgs({
  options: {
    tag: { type: "string", default: `telorun/k8s-runner:${version}` },
    out: { type: "string" },
    node: { type: "string", default: process.execPath },
    "session-image": { type: "string", default: DEFAULT_SESSION_IMAGE },
  },
});
const out = resolve(values.out ?? join(root, ".tmp", "image", `${values.tag.replace(/[/:]/g, "_")}.tar`));

try {
  const distDir = join(root, "dist");
  // Afresh, so nothing a previous build left behind ends up in the image.
  await rm(distDir, { recursive: true, force: true });
  await buildRunner({ root, outDir: distDir, sourceMaps: true }, true);
  const image = await buildImage({ root, distDir, nodeBinary: values.node, ref: values.tag, sessionImage: values["session-image"], version });
  await mkdir(dirname(out), { recursive: true });
  await writeFile(out, image.archive);
  process.stdout.write(`${JSON.stringify({ file: out, ref: values.tag, digest: image.digest, bytes: image.archive.length, layerBytes: image.layerSizes, runtime: image.provenance })}\n`);
} catch (error) {
  process.stderr.write(`${error instanceof Error ? error.message : String(error)}\n`);
  process.exit(1);
}
