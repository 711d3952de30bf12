/**
 * The image's tar writer (src/release/tar.ts) read back by GNU tar, the reader a user has, and
 * by its own reader: long names through PAX headers, modes, owners, links, and fixed mtimes.
 */
import { execFileSync } from "node:child_process";
import { describe, expect, it } from "vitest";
import { readTar, writeTar, type TarEntry } from "../../src/release/tar.ts";

const LONG = `app/node_modules/${"a".repeat(60)}/node_modules/${"b".repeat(60)}/lib/index.js`;
const entries: TarEntry[] = [
  { type: "dir", path: "app", mode: 0o755 },
  { type: "file", path: "app/run.sh", mode: 0o755, data: Buffer.from("#!/bin/sh\n") },
  { type: "file", path: LONG, mode: 0o644, data: Buffer.from("x".repeat(1000)) },
  { type: "symlink", path: "lib", target: "usr/lib" },
  { type: "symlink", path: "app/far", target: `../${"c".repeat(120)}` },
  { type: "dir", path: "home/node", mode: 0o755, uid: 1000, gid: 1000 },
];

describe("the image's tar writer", () => {
  it("writes what GNU tar lists: names past 100 bytes, modes, owners, link targets, mtime 0", () => {
    const listing = execFileSync("tar", ["--numeric-owner", "--full-time", "-tvf", "-"], { input: writeTar(entries), encoding: "utf8" });
    const lines = listing.trim().split("\n");
    expect(lines).toHaveLength(entries.length);
    expect(lines[1]).toMatch(/^-rwxr-xr-x 0\/0 +10 1970-01-01 00:00:00 app\/run\.sh$/);
    expect(lines[2]).toContain(LONG);
    expect(lines[4]).toContain(`app/far -> ../${"c".repeat(120)}`);
    expect(lines[5]).toMatch(/^drwxr-xr-x 1000\/1000 /);
  });

  it("reads back exactly what it wrote, and writes the same bytes twice", () => {
    const archive = writeTar(entries);
    expect(readTar(archive)).toEqual(entries.map((entry) => (entry.type === "symlink" ? entry : { uid: 0, gid: 0, ...entry, path: entry.type === "dir" ? `${entry.path}/` : entry.path })));
    expect(writeTar(entries).equals(archive)).toBe(true);
  });
});
