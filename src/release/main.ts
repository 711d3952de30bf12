/** `npm run build`: the compiled runner in dist/ (src/release/build.ts says what and why). */
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { buildRunner } from "./build.ts";

const root = fileURLToPath(new URL("../..", import.meta.url));
await buildRunner({ root, outDir: join(root, "dist"), sourceMaps: true }, true).catch((error: unknown) => {
  process.stderr.write(`${error instanceof Error ? error.message : String(error)}\n`);
  process.exit(1);
});
