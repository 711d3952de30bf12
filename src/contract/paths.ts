import { posix } from "node:path";

/**
 * The path guard (docs/api.md "Creating a session"): POSIX-normalise, strip leading slashes, and refuse
 * anything that is empty or climbs out of the bundle root. Also refused: a
 * NUL byte anywhere, which a tar header or a filesystem call reads as the end of the name (so
 * `..\0` became `..`), and a path naming a directory (`./`, `a/`), which is not a file.
 * Returns the normalised path, or undefined when the path is refused.
 */
export function normaliseRelativePath(path: string): string | undefined {
  if (path.includes("\0")) return undefined;
  const normalised = posix.normalize(path).replace(/^\/+/, "");
  if (normalised === "" || normalised === "." || normalised === ".." || normalised.endsWith("/")) return undefined;
  if (normalised.startsWith("../") || normalised.split("/").includes("..")) return undefined;
  return normalised;
}

export function invalidPathMessage(path: string): string {
  // Control characters escaped, so they are visible in the message rather than acted on.
  const shown = path.replace(/[\u0000-\u001f\u007f]/g, (char) => `\\u${char.charCodeAt(0).toString(16).padStart(4, "0")}`);
  return `invalid bundle relativePath '${shown}'`;
}
