/**
 * `npm run release [-- --out DIR] [--helm BINARY]`: the version's artifacts in one folder
 * (default `.tmp/release/<version>/`; src/release/release.ts says which and how). helm is
 * `--helm`, else `$HELM`, else the one test/deploy/helm.sh cached; with none, the chart is left
 * out and that is said on stderr.
 */
import { existsSync } from "node:fs";
import { readdir, readFile } from "node:fs/promises";
import { homedir } from "node:os";
import { join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import { release } from "./release.ts";

const root = fileURLToPath(new URL("../..", import.meta.url));
const { version } = JSON.parse(await readFile(join(root, "package.json"), "utf8")) as { version: string };
const { values } = parseArgs({ options: { out: { type: "string" }, helm: { type: "string" } } });

/** The newest helm test/deploy/helm.sh has built into its tools cache, if any. */
async function cachedHelm(): Promise<string | undefined> {
  const tools = process.env.K8S_RUNNER_TOOLS ?? join(homedir(), ".cache/k8s-runner/tools");
  const builds = (await readdir(tools).catch(() => [])).filter((name) => name.startsWith("helm-")).sort();
  return builds.map((name) => join(tools, name, "helm")).filter((path) => existsSync(path)).pop();
}

try {
  const out = resolve(values.out ?? join(root, ".tmp", "release", version));
  const helm = values.helm ?? process.env.HELM ?? (await cachedHelm());
  const result = await release({ root, out, version, helm, nodeBinary: process.execPath });
  for (const skipped of result.skipped) process.stderr.write(`left out: ${skipped}\n`);
  process.stdout.write(`${JSON.stringify({ out, files: result.files })}\n`);
} catch (error) {
  process.stderr.write(`${error instanceof Error ? error.message : String(error)}\n`);
  process.exit(1);
}
