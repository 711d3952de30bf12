#!/usr/bin/env node
// The `k8s-runner` command (package.json "bin"). In a clone, where the dev dependency tsx is
// installed, it runs the TypeScript source, so `npx k8s-runner` needs no build. Where tsx is
// absent (an install without dev dependencies), it runs the compiled CLI that `npm run build`
// writes to dist/; `node dist/src/cli/main.js` is that same program.
const tsx = await import("tsx/esm/api").catch(() => undefined);
if (tsx) {
  tsx.register();
  await import(new URL("./main.ts", import.meta.url).href);
} else {
  await import(new URL("../../dist/src/cli/main.js", import.meta.url).href).catch((error) => {
    if (error?.code !== "ERR_MODULE_NOT_FOUND") throw error;
    process.stderr.write("k8s-runner: the CLI is not built: run `npm run build` (or install the dev dependencies)\n");
    process.exit(1);
  });
}
