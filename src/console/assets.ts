/**
 * The console page's files: its own (src/console/assets, copied to dist/ by `npm run build`)
 * and xterm.js from the installed npm package, never a CDN. A fixed table, so no request
 * path ever reaches the file system.
 */
import { readFile } from "node:fs/promises";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import { runnerPath } from "../install-layout.ts";

export type Asset = { path: string; contentType: string };

const here = runnerPath("console/assets");
const xterm = dirname(createRequire(import.meta.url).resolve("@xterm/xterm/package.json"));

export const CONSOLE_PAGE: Asset = { path: join(here, "index.html"), contentType: "text/html; charset=utf-8" };

const JS = "text/javascript; charset=utf-8";

/** The page's own modules, each served as it is (no build step: the browser loads ES modules). */
const MODULES = ["console.js", "api.js", "capabilities.js", "form.js", "bundle.js", "describe.js", "session-panel.js", "endpoints.js", "terminal.js", "timeline.js"];

export const CONSOLE_ASSETS: Record<string, Asset> = {
  ...Object.fromEntries(MODULES.map((file) => [file, { path: join(here, file), contentType: JS }])),
  "console.css": { path: join(here, "console.css"), contentType: "text/css; charset=utf-8" },
  "xterm.mjs": { path: join(xterm, "lib", "xterm.mjs"), contentType: JS },
  "xterm.css": { path: join(xterm, "css", "xterm.css"), contentType: "text/css; charset=utf-8" },
};

const cache = new Map<string, Buffer>();

/** The asset's bytes, read once (they never change while the process runs). */
export async function assetBytes(asset: Asset): Promise<Buffer> {
  let bytes = cache.get(asset.path);
  if (!bytes) cache.set(asset.path, (bytes = await readFile(asset.path)));
  return bytes;
}
