/**
 * README.md's "How it is built" names folders and files; each path it spells from the top
 * (`src/…`, `handlers/…`, `test/…`) must exist, so the map cannot drift from the tree unseen.
 */
import { existsSync, readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";

const REPO_ROOT = fileURLToPath(new URL("../../", import.meta.url));
const readme = readFileSync(new URL("README.md", `file://${REPO_ROOT}`), "utf8");
const section = readme.slice(readme.indexOf("<!-- section:architecture -->"), readme.indexOf("<!-- /section:architecture -->"));

describe("README's map of the folders", () => {
  const paths = [...section.matchAll(/`((?:src|handlers|test)\/[\w./-]*)`/g)].map((match) => match[1]!);

  it("names the folders and files it describes", () => {
    expect(paths).toEqual(expect.arrayContaining(["handlers/", "src/kube/session/", "src/kube/status/pod-decision.ts", "src/sim/"]));
  });

  it("names only paths that exist", () => {
    expect(paths.filter((path) => !existsSync(`${REPO_ROOT}${path}`))).toEqual([]);
  });
});
