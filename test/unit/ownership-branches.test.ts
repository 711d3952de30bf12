/**
 * One replica and several run the same session code (docs/replicas.md "One replica and several"):
 * outside the two ownership implementations and the configuration, the places that still ask
 * whether this runner is one of several are the few listed here, each for the reason given. A
 * new one fails this test until it is justified here and in the doc.
 */
import { readFile, readdir } from "node:fs/promises";
import { join, relative } from "node:path";
import { describe, expect, it } from "vitest";

const ROOT = join(import.meta.dirname, "../..");

/** What asks "one replica or several": the only-replica writer, the pool's peers, the replica settings. */
const ASKS = /\.alone\b|#peers\b|\bpoolPeers\b|\breplicaConfig\b/g;

/** Where the question is the subject itself, not a branch of the session code. */
const SUBJECT = ["src/replicas/", "src/sessions/sole-ownership.ts", "src/sessions/ownership-seam.ts", "src/config/", "src/supervisor/replication.ts", "src/supervisor/pool-peers.ts", "src/internal/"];

/** The branches that remain, by file, with why (the count of asks in each). */
const REMAINING: Record<string, { asks: number; why: string }> = {
  "src/kube/cluster/fencing.ts": { asks: 2, why: "the only replica acts on any pod and stamps nothing: a stamp left by an earlier install of several must not lock it out" },
  "src/kube/backend.ts": { asks: 4, why: "the pool gets the other replicas' view; a claim that fails at one replica's boot cannot be retried by a next period, so it takes the session over and saves the ceiling later" },
  "src/kube/pool/warm-pool.ts": { asks: 12, why: "pool pods of one replica have no maker to hand a claim's answer to: the answer is delivered where the claim is made" },
  "src/supervisor/main.ts": { asks: 7, why: "a replica names itself in its User-Agent; the sweep of young objects waits only where another replica may be making one" },
};

async function sources(): Promise<string[]> {
  const entries = await readdir(join(ROOT, "src"), { withFileTypes: true, recursive: true });
  return entries.filter((entry) => entry.isFile() && entry.name.endsWith(".ts")).map((entry) => relative(ROOT, join(entry.parentPath, entry.name)));
}

describe("one replica and several", () => {
  it("share the session code but for the branches listed, each for its reason", async () => {
    const found: Record<string, number> = {};
    for (const file of await sources()) {
      if (SUBJECT.some((subject) => file.startsWith(subject))) continue;
      const code = (await readFile(join(ROOT, file), "utf8")).replace(/\/\*[\s\S]*?\*\/|\/\/.*$/gm, "");
      const asks = code.match(ASKS)?.length ?? 0;
      if (asks > 0) found[file] = asks;
    }
    expect(found).toEqual(Object.fromEntries(Object.entries(REMAINING).map(([file, { asks }]) => [file, asks])));
  });

  it("are each explained in docs/replicas.md", async () => {
    const page = await readFile(join(ROOT, "docs/replicas.md"), "utf8");
    expect(Object.keys(REMAINING).filter((file) => !page.includes(`\`${file}\``))).toEqual([]);
  });
});
