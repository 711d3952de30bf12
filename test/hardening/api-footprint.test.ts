/**
 * The api process loads only what it serves (issue 9 bug 6, issue 13): neither the simulator
 * nor a Kubernetes client is reachable from its entries through any import, static or dynamic.
 * Read from the source's own import statements, so a new import that breaks this fails here.
 */
import { readFileSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";

const ROOT = fileURLToPath(new URL("../..", import.meta.url));
const IMPORT = /(?:^|\n)\s*(?:import|export)\s[^;]*?from\s+"([^"]+)"|import\(\s*"([^"]+)"\s*\)|(?:^|\n)\s*import\s+"([^"]+)"/g;

/** Every module reachable from `entry`: project files by path, packages by name. */
function reachable(entry: string): Set<string> {
  const seen = new Set<string>();
  const queue = [resolve(ROOT, entry)];
  while (queue.length > 0) {
    const file = queue.pop()!;
    if (seen.has(file)) continue;
    seen.add(file);
    const source = readFileSync(file, "utf8");
    for (const match of source.matchAll(IMPORT)) {
      const specifier = match[1] ?? match[2] ?? match[3]!;
      if (specifier.startsWith(".")) queue.push(resolve(dirname(file), specifier));
      else seen.add(specifier);
    }
  }
  return new Set([...seen].map((name) => (name.startsWith(ROOT) ? name.slice(ROOT.length) : name)));
}

describe("the api process's footprint", () => {
  it.each(["src/main.ts", "src/api/main.ts"])("%s reaches no simulator and no Kubernetes client", (entry) => {
    const modules = [...reachable(entry)];
    expect(modules.filter((name) => name.startsWith("src/sim/") || name.startsWith("src/kube/") || name === "src/local-cluster.ts")).toEqual([]);
    expect(modules.filter((name) => name.startsWith("@kubernetes/") || name.startsWith("kubernetes-models") || name.startsWith("@kubernetes-models/"))).toEqual([]);
    // The launcher reaches the simulator only through a child process's entry file.
    expect(modules).toContain(entry === "src/main.ts" ? "src/launch/local-cluster-process.ts" : "src/api/server.ts");
  });

  it("finds what it looks for (the supervisor does load a Kubernetes client)", () => {
    expect([...reachable("src/supervisor/main.ts")]).toContain("@kubernetes/client-node");
    expect([...reachable(join("src", "launch", "local-cluster-main.ts"))]).toContain("src/sim/index.ts");
  });
});
