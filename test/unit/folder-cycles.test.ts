/**
 * The house's folders import one way (docs/architecture.md "The folders"): no two folders of
 * src/ (and handlers/) import each other, however indirectly, and every folder is named in the
 * architecture page's table, so the page and the code cannot part ways unnoticed.
 */
import { readFile, readdir } from "node:fs/promises";
import { dirname, join, normalize, relative } from "node:path";
import { describe, expect, it } from "vitest";

const ROOT = join(import.meta.dirname, "../..");

async function sourceFiles(dir: string): Promise<string[]> {
  const entries = await readdir(join(ROOT, dir), { withFileTypes: true, recursive: true });
  return entries.filter((entry) => entry.isFile() && entry.name.endsWith(".ts")).map((entry) => relative(ROOT, join(entry.parentPath, entry.name)));
}

/** `src/<folder>` or `handlers`; a file at the top of src/ is a folder of its own. */
function folderOf(file: string): string {
  const parts = file.split("/");
  if (parts[0] === "handlers") return "handlers";
  return parts.length > 2 ? `src/${parts[1]}` : file;
}

/** Folder → the folders its files import (relative imports, type-only ones included). */
async function folderGraph(): Promise<Map<string, Set<string>>> {
  const graph = new Map<string, Set<string>>();
  for (const file of [...(await sourceFiles("src")), ...(await sourceFiles("handlers"))]) {
    const text = await readFile(join(ROOT, file), "utf8");
    for (const match of text.matchAll(/\bfrom\s+["'](\.[^"']+)["']/g)) {
      const [from, to] = [folderOf(file), folderOf(normalize(join(dirname(file), match[1]!)))];
      if (from === to) continue;
      if (!graph.has(from)) graph.set(from, new Set());
      graph.get(from)!.add(to);
    }
  }
  return graph;
}

/** Every cycle's folders, each cycle once (Tarjan's strongly connected components of more than one folder). */
function cycles(graph: Map<string, Set<string>>): string[][] {
  let index = 0;
  const indices = new Map<string, number>();
  const lowlinks = new Map<string, number>();
  const stack: string[] = [];
  const found: string[][] = [];
  const visit = (node: string) => {
    indices.set(node, index);
    lowlinks.set(node, index++);
    stack.push(node);
    for (const next of graph.get(node) ?? []) {
      if (!indices.has(next)) {
        visit(next);
        lowlinks.set(node, Math.min(lowlinks.get(node)!, lowlinks.get(next)!));
      } else if (stack.includes(next)) lowlinks.set(node, Math.min(lowlinks.get(node)!, indices.get(next)!));
    }
    if (lowlinks.get(node) !== indices.get(node)) return;
    const component: string[] = [];
    for (let member = stack.pop(); member !== undefined; member = member === node ? undefined : stack.pop()) component.push(member);
    if (component.length > 1) found.push(component.sort());
  };
  for (const node of graph.keys()) if (!indices.has(node)) visit(node);
  return found;
}

describe("the folders of the house", () => {
  it("import one way: no folders import each other", async () => {
    expect(cycles(await folderGraph())).toEqual([]);
  });

  it("finds a cycle where there is one", () => {
    const graph = new Map([["src/a", new Set(["src/b"])], ["src/b", new Set(["src/c"])], ["src/c", new Set(["src/a"])]]);
    expect(cycles(graph)).toEqual([["src/a", "src/b", "src/c"]]);
  });

  it("are each named in docs/architecture.md's table of folders", async () => {
    const page = await readFile(join(ROOT, "docs/architecture.md"), "utf8");
    const folders = new Set([...(await sourceFiles("src"))].map(folderOf).filter((folder) => !folder.endsWith(".ts")));
    const unnamed = [...folders, "handlers"].filter((folder) => !page.includes(`\`${folder}/`));
    expect(unnamed).toEqual([]);
  });
});
