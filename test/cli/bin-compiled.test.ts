/**
 * The bin after a build, where tsx is not installed: it must run the compiled CLI. The CLI's
 * module graph is compiled with the build's settings into a scratch package whose node_modules
 * holds every dependency but tsx, and the bin is run from there.
 */
import { execFileSync, spawnSync } from "node:child_process";
import { copyFile, mkdir, mkdtemp, readdir, rm, symlink, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, expect, it } from "vitest";
import { REPO_ROOT } from "../deploy/render.ts";
import { freePort } from "../support/ports.ts";

let scratch: string;

beforeAll(async () => {
  scratch = await mkdtemp(join(tmpdir(), "k8s-runner-bin-"));
  await writeFile(
    join(scratch, "tsconfig.json"),
    JSON.stringify({
      extends: join(REPO_ROOT, "tsconfig.build.json"),
      compilerOptions: {
        outDir: join(scratch, "dist"),
        rootDir: REPO_ROOT,
        sourceMap: false,
        typeRoots: [join(REPO_ROOT, "node_modules/@types")],
      },
      include: [join(REPO_ROOT, "src/cli/main.ts")],
    }),
  );
  execFileSync(process.execPath, [join(REPO_ROOT, "node_modules/typescript/bin/tsc"), "-p", join(scratch, "tsconfig.json")], { stdio: "pipe" });
  await mkdir(join(scratch, "src/cli"), { recursive: true });
  await copyFile(join(REPO_ROOT, "src/cli/bin.mjs"), join(scratch, "src/cli/bin.mjs"));
  await copyFile(join(REPO_ROOT, "package.json"), join(scratch, "package.json"));
  await mkdir(join(scratch, "node_modules"));
  for (const name of await readdir(join(REPO_ROOT, "node_modules"))) {
    if (name !== "tsx" && name !== ".bin") await symlink(join(REPO_ROOT, "node_modules", name), join(scratch, "node_modules", name));
  }
}, 180_000);

afterAll(async () => {
  if (scratch) await rm(scratch, { recursive: true, force: true });
});

it("runs the compiled CLI when tsx is absent", async () => {
  const bin = join(scratch, "src/cli/bin.mjs");
  const help = spawnSync(process.execPath, [bin, "--help"], { encoding: "utf8" });
  expect(help.status).toBe(0);
  expect(help.stdout.split("\n")[0]).toBe("usage: k8s-runner <command> [options]");
  const url = `http://127.0.0.1:${await freePort()}`;
  const refused = spawnSync(process.execPath, [bin, "capabilities", "--url", url], { encoding: "utf8" });
  expect({ status: refused.status, stderr: refused.stderr }).toEqual({
    status: 1,
    stderr: `k8s-runner: cannot reach the runner at ${url} (ECONNREFUSED)\n`,
  });
});
