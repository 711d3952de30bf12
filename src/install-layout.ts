/**
 * Where the runner's own files are, found from the running code's place: the nearest enclosing
 * directory named `src` is the runner's tree. That holds in a checkout (src/, run by tsx), in
 * tsc's output (dist/src/) and in the process bundles `npm run build` writes over their entry
 * files (this module's code then sits in an entry file or in a chunk under dist/src/chunks/, so
 * its own place is the bundle's). Asking "beside me" instead would break as soon as a module is
 * bundled elsewhere.
 */
import { basename, dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const here = fileURLToPath(import.meta.url);

function nearestSrcDirectory(path: string): string {
  for (let dir = dirname(path); ; dir = dirname(dir)) {
    if (basename(dir) === "src") return dir;
    if (dirname(dir) === dir) throw new Error(`the runner's files are not under a src/ directory: ${path}`);
  }
}

const runnerTree = nearestSrcDirectory(here);
/** Entries are run as they were found: TypeScript under tsx, JavaScript once compiled. */
const entryExtension = here.endsWith(".ts") ? ".ts" : ".js";

/** A file of the runner's tree, e.g. `console/assets` (a folder the build copies as it is). */
export function runnerPath(relative: string): string {
  return join(runnerTree, relative);
}

/** A process entry to fork, e.g. `supervisor/main`. */
export function entryPath(relative: string): string {
  return join(runnerTree, relative + entryExtension);
}
