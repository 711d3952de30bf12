/**
 * A directory read into a session bundle. Text files travel as UTF-8, anything that is not
 * valid UTF-8 as base64. Dependency and VCS folders are left out (the pod resolves modules
 * itself), and symbolic links are not followed, so a bundle never holds files from outside
 * the directory.
 */
import { lstat, readdir, readFile } from "node:fs/promises";
import { join, relative, sep } from "node:path";
import type { BundleFile, RunBundle } from "../contract/wire.ts";

const SKIPPED_DIRECTORIES = new Set(["node_modules", ".git"]);
export const DEFAULT_ENTRY = "telo.yaml";

export class BundleError extends Error {
  override name = "BundleError";
}

async function listFiles(root: string, dir: string, out: string[]): Promise<void> {
  const entries = await readdir(dir, { withFileTypes: true });
  for (const entry of entries.sort((a, b) => a.name.localeCompare(b.name))) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) {
      if (!SKIPPED_DIRECTORIES.has(entry.name)) await listFiles(root, path, out);
    } else if (entry.isFile()) {
      out.push(relative(root, path));
    }
  }
}

function encodeFile(relativePath: string, bytes: Buffer): BundleFile {
  try {
    const contents = new TextDecoder("utf-8", { fatal: true }).decode(bytes);
    return { relativePath, contents };
  } catch {
    return { relativePath, contents: bytes.toString("base64"), encoding: "base64" };
  }
}

export async function readBundle(dir: string, entry: string | undefined): Promise<RunBundle> {
  const stat = await lstat(dir).catch(() => undefined);
  if (!stat?.isDirectory()) throw new BundleError(`${dir} is not a directory`);
  const paths: string[] = [];
  await listFiles(dir, dir, paths);
  const files = await Promise.all(
    paths.map(async (path) => encodeFile(path.split(sep).join("/"), await readFile(join(dir, path)))),
  );
  const entryRelativePath = entry ?? DEFAULT_ENTRY;
  if (!files.some((file) => file.relativePath === entryRelativePath)) {
    throw new BundleError(`${dir} has no ${entryRelativePath} (name the entry file with --entry)`);
  }
  return { entryRelativePath, files };
}
