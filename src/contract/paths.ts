import { posix } from "node:path";

/**
 * The path guard (contract.md §4.6): POSIX-normalise, strip leading slashes, and refuse
 * anything that is empty or climbs out of the bundle root. Returns the normalised path, or
 * undefined when the path is refused.
 */
export function normaliseRelativePath(path: string): string | undefined {
  const normalised = posix.normalize(path).replace(/^\/+/, "");
  if (normalised === "" || normalised === "." || normalised === "..") return undefined;
  if (normalised.startsWith("../") || normalised.split("/").includes("..")) return undefined;
  return normalised;
}

export function invalidPathMessage(path: string): string {
  return `invalid bundle relativePath '${path}'`;
}
