/**
 * `npm run build` (and `npm pack`'s prepack): the compiled runner in dist/ (src/release/build.ts
 * says what and why). Afresh, so that nothing an earlier build left there ends up in a tarball.
 */
import { rm } from "node:fs/promises";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { buildRunner } from "./build.ts";

const root = fileURLToPath(new URL("../..", import.meta.url));
const outDir = join(root, "dist");
await rm(outDir, { recursive: true, force: true });
await buildRunner({ root, outDir, sourceMaps: true }, true).catch((error: unknown) => {
  process.stderr.write(`${error instanceof Error ? error.message : String(error)}\n`);
  process.exit(1);
});
