#!/usr/bin/env node
// The `k8s-runner` command (package.json "bin"). In a clone, where the TypeScript source sits
// beside this file, it runs that source through the dev dependency tsx, so `npx k8s-runner`
// needs no build. The installed package carries no source, only the compiled CLI that
// `npm run build` writes to dist/ (`node dist/src/cli/main.js` is that same program). The choice
// is made on the source's presence, not on tsx's: a host project may well have tsx installed.
import { existsSync } from "node:fs";

const source = new URL("./main.ts", import.meta.url);
const tsx = existsSync(source) ? await import("tsx/esm/api").catch(() => undefined) : undefined;
if (tsx) {
  tsx.register();
  // `serve` forks the supervisor and the simulated cluster from source too; a fork inherits
  // execArgv, so tsx's loader is named there, as tsx's own command line would name it.
  process.execArgv.push("--import", import.meta.resolve("tsx"));
  await import(source.href);
} else {
  await import(new URL("../../dist/src/cli/main.js", import.meta.url).href).catch((error) => {
    if (error?.code !== "ERR_MODULE_NOT_FOUND") throw error;
    process.stderr.write("k8s-runner: the CLI is not built: run `npm run build` (or install the dev dependencies)\n");
    process.exit(1);
  });
}
