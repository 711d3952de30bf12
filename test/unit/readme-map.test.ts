/**
 * The documentation cannot drift from the tree unseen: every path README.md and docs/ spell from
 * the top (`src/…`, `handlers/…`, `test/…`, `bench/…`, `k8s/…`) must exist, docs/architecture.md
 * must map the folders, every link between the pages must reach a page and a heading that exist,
 * and docs/operating.md must list every variable the core reads.
 */
import { existsSync, readFileSync, readdirSync } from "node:fs";
import { dirname, join, normalize } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { consoleEnvSchema } from "../../src/config/console.ts";
import { coreEnvSchema } from "../../src/config/core.ts";

const REPO_ROOT = fileURLToPath(new URL("../../", import.meta.url));
const read = (path: string) => readFileSync(join(REPO_ROOT, path), "utf8");

/** GitHub's anchor of a heading: lower case, punctuation dropped, spaces to hyphens. */
function anchorOf(heading: string): string {
  return heading
    .trim()
    .toLowerCase()
    .replace(/[`*_]/g, "")
    .replace(/[^\p{L}\p{N} -]/gu, "")
    .replace(/ /g, "-");
}

function anchorsOf(markdown: string): Set<string> {
  const withoutCode = markdown.replace(/```[\s\S]*?```/g, "");
  return new Set([...withoutCode.matchAll(/^#{1,6} (.+)$/gm)].map((match) => anchorOf(match[1]!)));
}

describe("docs/architecture.md's map of the folders", () => {
  const paths = [...read("docs/architecture.md").matchAll(/`((?:src|handlers|test)\/[\w./-]*)`/g)].map((match) => match[1]!);

  it("names the folders and files it describes", () => {
    expect(paths).toEqual(expect.arrayContaining(["handlers/", "src/kube/session/", "src/kube/status/pod-decision.ts", "src/sim/"]));
  });

  it("names only paths that exist", () => {
    expect(paths.filter((path) => !existsSync(join(REPO_ROOT, path)))).toEqual([]);
  });
});

describe("paths the documentation names", () => {
  it("exist, so a moved or renamed file is noticed where it is described", () => {
    const pages = ["README.md", ...readdirSync(join(REPO_ROOT, "docs")).filter((name) => name.endsWith(".md")).map((name) => `docs/${name}`)];
    const missing: string[] = [];
    for (const page of pages) {
      for (const [, path] of read(page).matchAll(/`((?:src|test|handlers|bench|k8s)\/[\w./-]*)`/g)) {
        // Benchmark results are written by a run and git-ignored.
        if (path!.startsWith("bench/results/")) continue;
        if (!existsSync(join(REPO_ROOT, path!))) missing.push(`${page}: ${path}`);
      }
    }
    expect(missing).toEqual([]);
  });
});

describe("links between README.md and docs/", () => {
  const pages = ["README.md", ...readdirSync(join(REPO_ROOT, "docs")).filter((name) => name.endsWith(".md")).map((name) => `docs/${name}`)];

  it("has a page for each topic the README's map promises", () => {
    for (const page of ["api", "kubernetes", "operating", "simulated-cluster", "testing", "benchmarks", "architecture", "decisions"]) {
      expect(pages).toContain(`docs/${page}.md`);
    }
  });

  it("reaches pages and headings that exist", () => {
    const broken: string[] = [];
    for (const page of pages) {
      const text = read(page).replace(/```[\s\S]*?```/g, "");
      for (const [, target] of text.matchAll(/\]\(([^)\s]+)\)/g)) {
        if (/^[a-z]+:/.test(target!)) continue;
        const [file, anchor] = target!.split("#") as [string, string | undefined];
        const resolved = file === "" ? page : normalize(join(dirname(page), file));
        if (!existsSync(join(REPO_ROOT, resolved))) {
          broken.push(`${page}: ${target}`);
          continue;
        }
        if (anchor !== undefined && resolved.endsWith(".md") && !anchorsOf(read(resolved)).has(anchor)) broken.push(`${page}: ${target}`);
      }
    }
    expect(broken).toEqual([]);
  });
});

describe("docs/operating.md's core variables", () => {
  it("lists every variable the core and the console read", () => {
    const page = read("docs/operating.md");
    const start = page.indexOf("### Core variables");
    const section = page.slice(start, page.indexOf("\n### ", start + 1));
    expect(start).toBeGreaterThan(-1);
    const names = [...Object.keys(coreEnvSchema.entries), ...Object.keys(consoleEnvSchema.entries)];
    expect(names.filter((name) => !section.includes(`\`${name}\``))).toEqual([]);
  });
});
