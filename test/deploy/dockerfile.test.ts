import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { nodeCommand } from "../../src/launch/node-runtime.ts";
import { dockerfile, finalStage, instructionsOf, resolveImage } from "./dockerfile.ts";
import { REPO_ROOT, render, runnerDeployment } from "./render.ts";

const final = finalStage;
const resolve = resolveImage;
const of = instructionsOf;

describe("Dockerfile", () => {
  it("builds in separate stages on Node 20 and ships only the runtime stage", () => {
    expect(dockerfile.stages.length).toBeGreaterThanOrEqual(3);
    for (const stage of dockerfile.stages) expect(resolve(stage.from)).toMatch(/^node:20[.-]/);
    const buildStage = dockerfile.stages.find((s) => of(s, "RUN").some((r) => r.includes("npm run build")));
    expect(buildStage?.name).toBeDefined();
    expect(buildStage).not.toBe(final);
  });

  it("runs the compiled JavaScript with production dependencies only, and no package manager", () => {
    const copies = of(final, "COPY");
    const depsStage = dockerfile.stages.find((s) => of(s, "RUN").some((r) => /npm ci .*--omit=dev/.test(r)));
    expect(depsStage?.name).toBeDefined();
    expect(copies).toContain(`--from=${depsStage!.name} /app/node_modules ./node_modules`);
    const buildStage = dockerfile.stages.find((s) => of(s, "RUN").some((r) => r.includes("npm run build")));
    expect(copies).toContain(`--from=${buildStage!.name} /app/dist ./dist`);
    // package.json carries "type": "module", which Node needs to load dist/ as ESM
    expect(copies).toContain("package.json ./");
    expect(copies.some((c) => /\b(src|test|handlers|tsconfig)\b/.test(c))).toBe(false);
    expect(of(final, "RUN").join(" ")).not.toMatch(/npm (ci|install|i)\b/);
    expect(of(final, "RUN").join(" ")).toMatch(/rm -rf .*\/usr\/local\/lib\/node_modules\/npm/);
  });

  it("runs as the numeric non-root user the Deployment enforces, with the api as the default command", () => {
    const deployment = runnerDeployment(render("overlays/plain"));
    const security = deployment.spec.template.spec.securityContext as { runAsUser: number; runAsGroup: number };
    expect(of(final, "USER")).toEqual([`${security.runAsUser}:${security.runAsGroup}`]);
    expect(security.runAsUser).toBeGreaterThan(0);
    const api = deployment.spec.template.spec.containers.find((c) => c.name === "api")!;
    expect(of(final, "CMD")).toEqual([JSON.stringify(api.command).replace(/,/g, ", ")]);
    expect(of(final, "ENV").join(" ")).not.toContain("RUNNER_SELF_URL");
  });

  it("runs, in each container of the Deployment, a file the build emits", () => {
    const tsconfig = JSON.parse(readFileSync(join(REPO_ROOT, "tsconfig.json"), "utf8")) as {
      compilerOptions: { outDir: string; rootDir: string };
    };
    expect(tsconfig.compilerOptions).toMatchObject({ outDir: "dist", rootDir: "." });
    const build = JSON.parse(readFileSync(join(REPO_ROOT, "tsconfig.build.json"), "utf8")) as { include: string[] };
    for (const container of runnerDeployment(render("overlays/plain")).spec.template.spec.containers) {
      const script = container.command!.at(-1)!;
      expect(container.command).toEqual(nodeCommand(script));
      // dist/<path>.js is the output of <path>.ts under rootDir "."
      const source = script!.replace(/^dist\//, "").replace(/\.js$/, ".ts");
      expect(existsSync(join(REPO_ROOT, source))).toBe(true);
      expect(build.include.some((dir) => source.startsWith(`${dir}/`))).toBe(true);
    }
  });

  it("copies into the build stage everything tsconfig.build.json compiles, and the context allows it", () => {
    const tsconfig = JSON.parse(readFileSync(join(REPO_ROOT, "tsconfig.build.json"), "utf8")) as { include: string[] };
    const buildStage = dockerfile.stages.find((s) => of(s, "RUN").some((r) => r.includes("npm run build")))!;
    const ignore = readFileSync(join(REPO_ROOT, ".dockerignore"), "utf8").split(/\r?\n/).map((l) => l.trim());
    expect(ignore).toContain("*");
    for (const dir of tsconfig.include) {
      expect(of(buildStage, "COPY")).toContain(`${dir} ./${dir}`);
      expect(ignore).toContain(`!${dir}/`);
    }
    for (const file of ["package.json", "package-lock.json", "tsconfig.json", "tsconfig.build.json"]) {
      expect(ignore).toContain(`!${file}`);
    }
  });
});
