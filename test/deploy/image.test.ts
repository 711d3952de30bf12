/**
 * `npm run image`'s archive against the Dockerfile's production stage: the same files under
 * /app, the same user, command, environment, ports and working directory, the pinned Node
 * release, no package manager; and the same bytes (so the same digest) from two builds of one
 * checkout. The archive is read back with the tar reader, through index.json as containerd does.
 */
import { readdir, rm } from "node:fs/promises";
import { join, posix } from "node:path";
import { gunzipSync } from "node:zlib";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { nodeCommand, nodeRuntimeEnvLines } from "../../src/launch/node-runtime.ts";
import { buildRunner } from "../../src/release/build.ts";
import { productionPackages } from "../../src/release/image-content.ts";
import { buildImage, DEFAULT_SESSION_IMAGE, NODE_VERSION, type ImageBuild } from "../../src/release/image.ts";
import { readTar, type TarEntry } from "../../src/release/tar.ts";
import { dockerfile, finalStage, instructionsOf, resolveImage } from "./dockerfile.ts";
import { REPO_ROOT } from "./render.ts";

const OUT = join(REPO_ROOT, ".tmp", `image-test-${process.pid}`);
const REF = "telorun/k8s-runner:image-test";

type Config = { User: string; Env: string[]; Cmd: string[]; WorkingDir: string; ExposedPorts: Record<string, object> };

/** The archive as a runtime reads it: index.json → manifest → config and layer entries. */
function open(archive: Buffer): { config: Config; entries: TarEntry[]; annotations: Record<string, string> } {
  const files = new Map(readTar(archive).flatMap((entry) => (entry.type === "file" ? [[entry.path, entry.data] as const] : [])));
  const blob = (digest: string) => files.get(`blobs/sha256/${digest.slice("sha256:".length)}`)!;
  const json = <T>(data: Buffer | undefined) => JSON.parse(data!.toString("utf8")) as T;
  const index = json<{ manifests: Array<{ digest: string; annotations: Record<string, string> }> }>(files.get("index.json"));
  const manifest = json<{ config: { digest: string }; layers: Array<{ digest: string }> }>(blob(index.manifests[0]!.digest));
  const config = json<{ config: Config }>(blob(manifest.config.digest)).config;
  const entries = manifest.layers.flatMap((layer) => readTar(gunzipSync(blob(layer.digest))));
  return { config, entries, annotations: index.manifests[0]!.annotations };
}

async function filesUnder(dir: string, prefix = ""): Promise<string[]> {
  const found: string[] = [];
  for (const entry of await readdir(dir, { withFileTypes: true })) {
    const path = posix.join(prefix, entry.name);
    found.push(path, ...(entry.isDirectory() ? await filesUnder(join(dir, entry.name), path) : []));
  }
  return found;
}

describe("the runner's image archive (npm run image)", () => {
  const builds: ImageBuild[] = [];
  let image: ReturnType<typeof open>;

  beforeAll(async () => {
    await buildRunner({ root: REPO_ROOT, outDir: OUT, sourceMaps: true }, true);
    for (let i = 0; i < 2; i += 1) {
      builds.push(await buildImage({ root: REPO_ROOT, distDir: OUT, nodeBinary: process.execPath, ref: REF, sessionImage: DEFAULT_SESSION_IMAGE, version: "0.0.0-test" }));
    }
    image = open(builds[0]!.archive);
    // A compile and two images of about 60 MB (gzip of node's 96 MB binary dominates).
  }, 480_000);

  afterAll(async () => {
    await rm(OUT, { recursive: true, force: true });
  });

  it("is the same bytes, so the same digest, from two builds of one compiled checkout", () => {
    expect(builds[1]!.digest).toBe(builds[0]!.digest);
    expect(builds[1]!.archive.equals(builds[0]!.archive)).toBe(true);
  });

  it("names the image for containerd's import", () => {
    expect(image.annotations["io.containerd.image.name"]).toBe(`docker.io/${REF}`);
  });

  it("has the production stage's user, command, working directory, ports and environment", () => {
    const of = (keyword: string) => instructionsOf(finalStage, keyword);
    expect(image.config.User).toBe(of("USER")[0]);
    expect(JSON.stringify(image.config.Cmd).replace(/,/g, ", ")).toBe(of("CMD")[0]);
    expect(image.config.WorkingDir).toBe(of("WORKDIR")[0]);
    expect(Object.keys(image.config.ExposedPorts).sort()).toEqual(of("EXPOSE").join(" ").split(" ").map((port) => `${port}/tcp`).sort());
    // ENV lines, with the ARG defaults the stage declares substituted.
    const args = new Map(of("ARG").map((arg) => arg.split("=") as [string, string]));
    const env = of("ENV")
      .join(" ")
      .split(" ")
      .map((pair) => pair.replace(/\$\{(\w+)\}/g, (_, name: string) => args.get(name) ?? ""));
    expect(env.length).toBeGreaterThan(0);
    for (const pair of env) expect(image.config.Env).toContain(pair);
    expect(image.config.Env).toContain(`NODE_VERSION=${NODE_VERSION.slice(1)}`);
    // Node's memory settings (src/launch/node-runtime.ts), in both: the Dockerfile must not drop them.
    expect(image.config.Cmd).toEqual(nodeCommand("dist/src/api/main.js"));
    expect(image.config.Env).toEqual(expect.arrayContaining(nodeRuntimeEnvLines()));
  });

  it("runs the Node release the Dockerfile pins", () => {
    expect(resolveImage(finalStage.from)).toBe(`node:${NODE_VERSION.slice(1)}-bookworm-slim`);
    expect(dockerfile.args.get("NODE_IMAGE")).toBe(`node:${NODE_VERSION.slice(1)}-bookworm-slim`);
    const node = image.entries.find((entry) => entry.path === "usr/local/bin/node");
    expect(node).toMatchObject({ type: "file", mode: 0o755 });
    // The dynamic loader node names, at the path its ELF header gives.
    expect(image.entries.some((entry) => entry.path === "usr/lib64/ld-linux-x86-64.so.2")).toBe(true);
    expect(image.entries.find((entry) => entry.path === "lib64")).toMatchObject({ type: "symlink", target: "usr/lib64" });
  });

  it("holds under /app exactly what the stage copies: dist/, the production node_modules, package.json", async () => {
    // Directories are named with a trailing slash, as tar writes them; `app/` itself is no content.
    const app = image.entries.filter((entry) => entry.path.startsWith("app/") && entry.path !== "app/");
    const top = new Set(app.map((entry) => entry.path.split("/")[1]));
    const copied = instructionsOf(finalStage, "COPY").map((copy) => copy.split(" ").at(-1)!.replace(/^\.\//, "").replace(/\/$/, ""));
    expect([...top].sort()).toEqual(copied.map((path) => (path === "" ? "package.json" : path)).sort());
    const dist = app.filter((entry) => entry.path.startsWith("app/dist/")).map((entry) => entry.path.slice("app/dist/".length).replace(/\/$/, "")).filter((path) => path !== "");
    expect(dist.sort()).toEqual((await filesUnder(OUT)).sort());
    // A package is a package.json directly under a node_modules/<name> (or <@scope/name>).
    const packageDir = /^app\/((?:node_modules\/(?:@[^/]+\/)?[^/]+\/)*node_modules\/(?:@[^/]+\/)?[^/]+)\/package\.json$/;
    const shipped = app.flatMap((entry) => packageDir.exec(entry.path)?.[1] ?? []);
    expect(shipped.sort()).toEqual((await productionPackages(REPO_ROOT)).map((pkg) => pkg.path).sort());
    expect(app.some((entry) => /\/node_modules\/(vitest|esbuild|tsx|playwright-core)\//.test(entry.path))).toBe(false);
  });

  it("ships no package manager, and only the user's home belongs to uid 1000", () => {
    expect(image.entries.filter((entry) => /(^|\/)(npm|npx|corepack|yarn|yarnpkg)$/.test(entry.path)).map((entry) => entry.path)).toEqual([]);
    const owned = image.entries.filter((entry) => entry.type !== "symlink" && (entry.uid !== 0 || entry.gid !== 0)).map((entry) => entry.path.replace(/\/$/, ""));
    expect(owned).toEqual(["home/node"]);
    const passwd = image.entries.find((entry) => entry.path === "etc/passwd");
    expect(passwd?.type === "file" && passwd.data.toString()).toContain(`:x:${image.config.User}:`);
  });
});
