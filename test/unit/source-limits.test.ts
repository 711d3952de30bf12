/**
 * The project's size limits, kept by a test so that they hold: outside the simulated
 * cluster (src/sim/, a model of Kubernetes with its own shape), no source file of src/ or
 * handlers/ is over 400 lines and no function (declaration, method, arrow, accessor, constructor)
 * spans more than 80. A file or function that grows past them is a sign it does two jobs.
 */
import { readdirSync, readFileSync } from "node:fs";
import { join, relative } from "node:path";
import { fileURLToPath } from "node:url";
import ts from "typescript";
import { describe, expect, it } from "vitest";

const REPO_ROOT = fileURLToPath(new URL("../../", import.meta.url));
const MAX_FILE_LINES = 400;
const MAX_FUNCTION_LINES = 80;

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return relative(REPO_ROOT, path) === join("src", "sim") ? [] : sourceFiles(path);
    return /\.(ts|mts)$/.test(entry.name) ? [path] : [];
  });
}

function lineOf(file: ts.SourceFile, position: number): number {
  return file.getLineAndCharacterOfPosition(position).line + 1;
}

function functionName(node: ts.FunctionLikeDeclaration, file: ts.SourceFile): string {
  if (node.name) return node.name.getText(file);
  const parent = node.parent;
  if (ts.isVariableDeclaration(parent) || ts.isPropertyAssignment(parent) || ts.isPropertyDeclaration(parent)) return parent.name.getText(file);
  return "(anonymous)";
}

/** Every function-like node with its first and last line, nested ones included. */
function functionSpans(file: ts.SourceFile): { name: string; from: number; lines: number }[] {
  const spans: { name: string; from: number; lines: number }[] = [];
  const visit = (node: ts.Node) => {
    if (ts.isFunctionLike(node) && "body" in node && node.body) {
      const from = lineOf(file, node.getStart(file));
      spans.push({ name: functionName(node as ts.FunctionLikeDeclaration, file), from, lines: lineOf(file, node.getEnd()) - from + 1 });
    }
    ts.forEachChild(node, visit);
  };
  visit(file);
  return spans;
}

const files = [...sourceFiles(join(REPO_ROOT, "src")), ...sourceFiles(join(REPO_ROOT, "handlers"))];

describe("source size limits (outside src/sim/)", () => {
  it("reads the source tree", () => {
    expect(files.length).toBeGreaterThan(100);
    expect(files.some((path) => path.includes(`${join("src", "sim")}/`))).toBe(false);
  });

  it(`no file is over ${MAX_FILE_LINES} lines`, () => {
    const over = files
      .map((path) => ({ path: relative(REPO_ROOT, path), lines: readFileSync(path, "utf8").split("\n").length - 1 }))
      .filter((file) => file.lines > MAX_FILE_LINES)
      .map((file) => `${file.path}: ${file.lines} lines`);
    expect(over).toEqual([]);
  });

  it(`no function spans more than ${MAX_FUNCTION_LINES} lines`, () => {
    const over = files.flatMap((path) => {
      const file = ts.createSourceFile(path, readFileSync(path, "utf8"), ts.ScriptTarget.Latest, true);
      return functionSpans(file)
        .filter((span) => span.lines > MAX_FUNCTION_LINES)
        .map((span) => `${relative(REPO_ROOT, path)}:${span.from} ${span.name}: ${span.lines} lines`);
    });
    expect(over).toEqual([]);
  });

  it("measures a function the way the limit means it", () => {
    const file = ts.createSourceFile("probe.ts", "const f = () => {\n  return 1;\n};\nfunction g() {\n}\n", ts.ScriptTarget.Latest, true);
    expect(functionSpans(file)).toEqual([
      { name: "f", from: 1, lines: 3 },
      { name: "g", from: 4, lines: 2 },
    ]);
  });
});
