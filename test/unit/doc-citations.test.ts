/**
 * Comments cite the repository's own documents: a reader of the code must be able to open what a
 * comment points at. No source file may cite a specification kept outside the repository
 * (`contract.md §…`, `kubernetes.md §…`, `deploy.md`) or an issue tracker's number; every
 * `docs/<page>.md "<heading>"` citation must name a page and a heading that exist.
 */
import { readFileSync, readdirSync, statSync } from "node:fs";
import { join, relative } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";

const REPO_ROOT = fileURLToPath(new URL("../../", import.meta.url));
const SOURCE_ROOTS = ["src", "handlers", "test", "bench", "k8s", ".ci"];
const SOURCE_FILE = /\.(ts|mts|mjs|js|sh|ya?ml|go|md)$|^run$|^Dockerfile$/;
const SKIPPED_DIRS = new Set(["node_modules", "dist", "results", ".tmp"]);
const THIS_FILE = relative(REPO_ROOT, fileURLToPath(import.meta.url));
/** Public standards are cited by section; they are not the documents this rule is about. */
const STANDARD = /\b(?:WHATWG|RFC \d+)\b/;

function sourceFiles(dir: string): string[] {
  const files: string[] = [];
  for (const name of readdirSync(join(REPO_ROOT, dir))) {
    const path = `${dir}/${name}`;
    if (statSync(join(REPO_ROOT, path)).isDirectory()) {
      if (!SKIPPED_DIRS.has(name)) files.push(...sourceFiles(path));
    } else if (SOURCE_FILE.test(name) && path !== THIS_FILE) {
      files.push(path);
    }
  }
  return files;
}

const files = SOURCE_ROOTS.flatMap((root) => sourceFiles(root));
const lines = files.flatMap((file) => readFileSync(join(REPO_ROOT, file), "utf8").split("\n").map((text, index) => ({ at: `${file}:${index + 1}`, text })));

/** Outside documents (a specification's § numbers) and tracker numbers ("issue 11, bug 7"). */
const FOREIGN_CITATIONS: RegExp[] = [
  /(?<!docs\/)\b(?:contract|kubernetes|deploy)\.md\b/,
  /\bARCHITECTURE\.md\b/,
  /\bspec\/README\.md\b/,
  /§\s*\d/,
  /\bissues? #?\d+/i,
  /\bbugs? \d+\b/i,
  /\b(?:PR|pull request) #?\d+/i,
];

/** GitHub-style anchor text of a heading, for comparing a citation with the headings of a page. */
const headingKey = (text: string) => text.trim().toLowerCase().replace(/`/g, "");

function headingsOf(page: string): Set<string> {
  const text = readFileSync(join(REPO_ROOT, page), "utf8").replace(/```[\s\S]*?```/g, "");
  return new Set([...text.matchAll(/^#{1,6} (.+)$/gm)].map((match) => headingKey(match[1]!)));
}

describe("citations in source comments", () => {
  it("reads the source tree", () => {
    expect(files.length).toBeGreaterThan(100);
    expect(files).toEqual(expect.arrayContaining(["src/contract/routes.ts", "handlers/index.ts", "k8s/base/deployment.yaml"]));
  });

  it("cite no document outside the repository and no issue number", () => {
    const offending = lines.filter(({ text }) => !STANDARD.test(text) && FOREIGN_CITATIONS.some((pattern) => pattern.test(text)));
    expect(offending.map(({ at, text }) => `${at}: ${text.trim()}`)).toEqual([]);
  });

  it("name pages and headings of docs/ that exist", () => {
    const broken: string[] = [];
    const pages = new Map<string, Set<string>>();
    for (const { at, text } of lines) {
      for (const match of text.matchAll(/docs\/([\w-]+\.md)((?: "[^"]+"(?:,)?)*)/g)) {
        const page = `docs/${match[1]}`;
        if (!pages.has(page)) {
          try {
            pages.set(page, headingsOf(page));
          } catch {
            broken.push(`${at}: ${page} does not exist`);
            continue;
          }
        }
        for (const [, heading] of match[2]!.matchAll(/"([^"]+)"/g)) {
          if (!pages.get(page)!.has(headingKey(heading!))) broken.push(`${at}: ${page} has no heading "${heading}"`);
        }
      }
    }
    expect(broken).toEqual([]);
  });

  it("would notice a foreign citation", () => {
    const caught = (text: string) => FOREIGN_CITATIONS.some((pattern) => pattern.test(text));
    expect(caught("// per contract.md §3.5")).toBe(true);
    expect(caught("/** (kubernetes.md §2.10) */")).toBe(true);
    expect(caught("// found in issue 11, bug 7")).toBe(true);
    expect(caught('// see docs/kubernetes.md "Warm pool"')).toBe(false);
  });
});
