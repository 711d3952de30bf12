/**
 * What the runner's image holds, layer by layer, as the Dockerfile's production stage lays it
 * out (docs/deployment.md):
 *   1. the runtime: node at /usr/local/bin/node, the shared libraries it links against at their
 *      Debian (merged-/usr) paths, /etc/passwd and /etc/group with uid/gid 1000, /tmp, /app;
 *   2. /app/node_modules: exactly the packages `npm ci --omit=dev` installs from the lockfile
 *      (every entry not marked `dev`), with their bin links;
 *   3. /app/dist (`npm run build`) and /app/package.json.
 * Files are owned by root as COPY leaves them; modes are 0755 for anything executable, else 0644.
 */
import { execFile } from "node:child_process";
import { lstat, readdir, readFile, readlink, realpath } from "node:fs/promises";
import { join, posix } from "node:path";
import { promisify } from "node:util";
import * as v from "valibot";
import type { TarEntry } from "./tar.ts";

const run = promisify(execFile);

/** The user the Deployment enforces (runAsUser/runAsGroup), as the Node images name it. */
export const IMAGE_USER = { uid: 1000, gid: 1000, name: "node" } as const;

const fileMode = (mode: number) => (mode & 0o111 ? 0o755 : 0o644);

/** Every file, directory and symlink under `source`, placed under `target` (sorted later). */
async function walk(source: string, target: string, skip: (name: string) => boolean = () => false): Promise<TarEntry[]> {
  const entries: TarEntry[] = [{ type: "dir", path: target, mode: 0o755 }];
  for (const name of (await readdir(source)).sort()) {
    if (skip(name)) continue;
    const from = join(source, name);
    const to = posix.join(target, name);
    const stat = await lstat(from);
    if (stat.isSymbolicLink()) entries.push({ type: "symlink", path: to, target: await readlink(from) });
    else if (stat.isDirectory()) entries.push(...(await walk(from, to)));
    else entries.push({ type: "file", path: to, mode: fileMode(stat.mode), data: await readFile(from) });
  }
  return entries;
}

/** Sorted by path, each path once, every parent directory present before its children. */
export function layerOrder(entries: readonly TarEntry[]): TarEntry[] {
  const byPath = new Map<string, TarEntry>();
  for (const entry of entries) {
    const path = entry.path.replace(/^\/+|\/+$/g, "");
    const parts = path.split("/");
    for (let i = 1; i < parts.length; i += 1) {
      const parent = parts.slice(0, i).join("/");
      if (!byPath.has(parent)) byPath.set(parent, { type: "dir", path: parent, mode: 0o755 });
    }
    byPath.set(path, { ...entry, path });
  }
  return [...byPath.values()].sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
}

/** Shared libraries `ldd` resolves for a binary, the dynamic loader included. */
async function sharedLibraries(binary: string): Promise<string[]> {
  const { stdout } = await run("ldd", [binary]);
  const paths = stdout
    .split("\n")
    .map((line) => /=>\s*(\/\S+)/.exec(line)?.[1] ?? /^\s*(\/\S+)\s+\(/.exec(line)?.[1])
    .filter((path): path is string => path !== undefined);
  return [...new Set(paths)].sort();
}

/** The Debian package and version that owns a file, for the image's provenance label. */
async function debianPackageOf(...paths: string[]): Promise<string> {
  // dpkg records the path the package shipped, before or after the /usr merge.
  for (const path of paths) {
    try {
      const owner = (await run("dpkg-query", ["-S", path])).stdout.split(":")[0]!.trim();
      const version = (await run("dpkg-query", ["-W", "-f=${Version}", owner])).stdout.trim();
      return `${owner}=${version}`;
    } catch {
      // not this spelling
    }
  }
  return "unpackaged";
}

/** Debian bookworm merges /lib into /usr/lib: files live under /usr, /lib and /lib64 are links. */
const merged = (path: string) => (/^\/lib(64)?\//.test(path) ? `/usr${path}` : path);

export type Runtime = { entries: TarEntry[]; nodeVersion: string; provenance: string };

/**
 * Layer 1: node, its libraries, the user and the directories. `nodeBinary` must be exactly
 * `nodeVersion`: the image pins the Node release the Dockerfile names.
 */
export async function runtimeLayer(nodeBinary: string, nodeVersion: string): Promise<Runtime> {
  const { stdout } = await run(nodeBinary, ["--version"]);
  if (stdout.trim() !== nodeVersion) throw new Error(`${nodeBinary} is ${stdout.trim()}, the image pins ${nodeVersion}`);
  const libraries = await sharedLibraries(nodeBinary);
  const entries: TarEntry[] = [
    { type: "symlink", path: "lib", target: "usr/lib" },
    { type: "symlink", path: "lib64", target: "usr/lib64" },
    { type: "file", path: "usr/local/bin/node", mode: 0o755, data: await readFile(nodeBinary) },
    { type: "dir", path: "tmp", mode: 0o1777 },
    { type: "dir", path: "app", mode: 0o755 },
    { type: "dir", path: `home/${IMAGE_USER.name}`, mode: 0o755, uid: IMAGE_USER.uid, gid: IMAGE_USER.gid },
    { type: "file", path: "etc/passwd", mode: 0o644, data: Buffer.from(`root:x:0:0:root:/root:/usr/sbin/nologin\n${IMAGE_USER.name}:x:${IMAGE_USER.uid}:${IMAGE_USER.gid}::/home/${IMAGE_USER.name}:/usr/sbin/nologin\n`) },
    { type: "file", path: "etc/group", mode: 0o644, data: Buffer.from(`root:x:0:\n${IMAGE_USER.name}:x:${IMAGE_USER.gid}:\n`) },
    // glibc's default without this file tries DNS before /etc/hosts; pods expect files first.
    { type: "file", path: "etc/nsswitch.conf", mode: 0o644, data: Buffer.from("hosts: files dns\n") },
  ];
  const owners: string[] = [];
  for (const library of libraries) {
    const real = await realpath(library);
    entries.push({ type: "file", path: merged(library), mode: fileMode((await lstat(real)).mode), data: await readFile(real) });
    owners.push(await debianPackageOf(library, real));
  }
  const nodePackage = await debianPackageOf(nodeBinary, await realpath(nodeBinary));
  const provenance = [`node ${nodeVersion} (${nodePackage})`, ...new Set(owners)].join(", ");
  return { entries: layerOrder(entries), nodeVersion, provenance };
}

const LockEntry = v.object({
  version: v.optional(v.string()),
  dev: v.optional(v.boolean()),
  link: v.optional(v.boolean()),
  bin: v.optional(v.record(v.string(), v.string())),
});
const Lockfile = v.object({ lockfileVersion: v.number(), packages: v.record(v.string(), LockEntry) });

/** The lockfile's packages `npm ci --omit=dev` installs: every entry not marked dev. */
export async function productionPackages(root: string): Promise<Array<{ path: string; version: string; bin: Record<string, string> }>> {
  const lock = v.parse(Lockfile, JSON.parse(await readFile(join(root, "package-lock.json"), "utf8")));
  if (lock.lockfileVersion < 2) throw new Error("package-lock.json must be lockfileVersion 2 or later");
  return Object.entries(lock.packages)
    .filter(([path, entry]) => path.startsWith("node_modules/") && entry.dev !== true)
    .map(([path, entry]) => {
      if (entry.link) throw new Error(`${path} is a link; the image copies real packages only`);
      return { path, version: entry.version ?? "", bin: entry.bin ?? {} };
    })
    .sort((a, b) => (a.path < b.path ? -1 : 1));
}

/** Layer 2: the production packages copied from the installed node_modules, versions checked. */
export async function dependencyLayer(root: string): Promise<TarEntry[]> {
  const entries: TarEntry[] = [];
  for (const pkg of await productionPackages(root)) {
    const source = join(root, pkg.path);
    const installed = v.parse(v.object({ version: v.string() }), JSON.parse(await readFile(join(source, "package.json"), "utf8")));
    if (installed.version !== pkg.version) throw new Error(`${pkg.path} is ${installed.version} in node_modules, ${pkg.version} in the lockfile: run npm ci`);
    // Nested packages are lockfile entries of their own.
    entries.push(...(await walk(source, `app/${pkg.path}`, (name) => name === "node_modules")));
    // npm links bins in the node_modules directory holding the package (scoped names included).
    const at = pkg.path.lastIndexOf("node_modules/") + "node_modules/".length;
    for (const [name, file] of Object.entries(pkg.bin)) {
      entries.push({ type: "symlink", path: `app/${pkg.path.slice(0, at)}.bin/${name}`, target: posix.join("..", pkg.path.slice(at), posix.normalize(file)) });
    }
  }
  return layerOrder(entries);
}

/** Layer 3: the compiled runner and package.json ("type": "module"). */
export async function applicationLayer(root: string, distDir: string): Promise<TarEntry[]> {
  const pkg = await lstat(join(root, "package.json"));
  return layerOrder([
    ...(await walk(distDir, "app/dist")),
    { type: "file", path: "app/package.json", mode: fileMode(pkg.mode), data: await readFile(join(root, "package.json")) },
  ]);
}
