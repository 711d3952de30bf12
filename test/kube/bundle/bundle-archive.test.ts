import { execFileSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { gunzipSync } from "node:zlib";
import { afterEach, describe, expect, it } from "vitest";
import { BundleArchiveError, bundleArchive, tarArchive } from "../../../src/kube/bundle/bundle-archive.ts";

const PNG = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0x00, 0xff]);

const scratchDirs: string[] = [];
afterEach(() => {
  for (const dir of scratchDirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

function scratch(): string {
  const dir = mkdtempSync(join(tmpdir(), "bundle-archive-"));
  scratchDirs.push(dir);
  return dir;
}

function field(block: Buffer, offset: number, length: number): string {
  return block.subarray(offset, offset + length).toString("latin1");
}

describe("tarArchive", () => {
  it("writes one ustar header per file with the fixed, deterministic fields", () => {
    const archive = tarArchive([{ relativePath: "telo.yaml", contents: "kind: Telo.Application\n" }]);
    const block = archive.subarray(0, 512);
    expect(field(block, 0, 100)).toBe("telo.yaml".padEnd(100, "\0"));
    expect(field(block, 100, 8)).toBe("0000644\0");
    expect(field(block, 108, 8)).toBe("0000000\0");
    expect(field(block, 116, 8)).toBe("0000000\0");
    expect(field(block, 124, 12)).toBe("00000000027\0"); // 23 bytes
    expect(field(block, 136, 12)).toBe("00000000000\0");
    expect(field(block, 156, 1)).toBe("0");
    expect(field(block, 257, 6)).toBe("ustar\0");
    expect(field(block, 263, 2)).toBe("00");

    const withSpaces = Buffer.from(block);
    withSpaces.write("        ", 148, "ascii");
    const sum = withSpaces.reduce((total, byte) => total + byte, 0);
    expect(field(block, 148, 8)).toBe(`${sum.toString(8).padStart(7, "0")}\0`);

    // header + one padded data block + two zero blocks
    expect(archive.length).toBe(4 * 512);
    expect(archive.subarray(512, 512 + 23).toString("utf8")).toBe("kind: Telo.Application\n");
    expect(archive.subarray(512 + 23).every((byte) => byte === 0)).toBe(true);
  });

  it("does not pad data that fills its last block exactly", () => {
    expect(tarArchive([{ relativePath: "a", contents: "x".repeat(1024) }]).length).toBe(512 + 1024 + 1024);
  });

  it("normalises paths and refuses traversal", () => {
    expect(field(tarArchive([{ relativePath: "/apps/./api/telo.yaml", contents: "" }]), 0, 18)).toBe("apps/api/telo.yaml");
    for (const path of ["../etc/passwd", "a/../../x", "..", "."]) {
      expect(() => tarArchive([{ relativePath: path, contents: "" }])).toThrow(BundleArchiveError);
    }
    expect(() => tarArchive([{ relativePath: "a/../../x", contents: "" }])).toThrow("invalid bundle relativePath 'a/../../x'");
  });

  it("refuses NUL bytes and directory paths, which tar would read as another name", () => {
    for (const path of ["..\u0000", "telo.yaml\u0000.bak", "./", "a/", "\u0000"]) {
      expect(() => tarArchive([{ relativePath: path, contents: "" }])).toThrow(BundleArchiveError);
    }
    expect(() => tarArchive([{ relativePath: "..\u0000", contents: "" }])).toThrow("invalid bundle relativePath '..\\u0000'");
  });

  it("writes a name of exactly 100 UTF-8 bytes in the ustar header and a longer one in a pax header", () => {
    const exact = "a".repeat(95) + "é.ym"; // 95 + 2 + 3 = 100 bytes
    expect(Buffer.byteLength(exact)).toBe(100);
    expect(field(tarArchive([{ relativePath: exact, contents: "" }]), 156, 1)).toBe("0");
    const long = "é".repeat(50) + "x"; // 101 bytes, 51 characters
    const archive = tarArchive([{ relativePath: long, contents: "" }]);
    expect(field(archive, 156, 1)).toBe("x");
    const record = archive.subarray(512, 512 + Number.parseInt(field(archive, 124, 11), 8)).toString("utf8");
    expect(record).toBe(`${Buffer.byteLength(record)} path=${long}\n`);
  });
});

describe("long names", () => {
  const long = `${"deep/".repeat(30)}${"ü".repeat(40)}/telo.yaml`;
  it.each([["GNU tar", ["tar"]], ["busybox tar (the init image's)", ["busybox", "tar"]]])("unpack under %s to the full path", async (_name, command) => {
    const dir = scratch();
    writeFileSync(join(dir, "bundle.tgz"), await bundleArchive([{ relativePath: long, contents: "kind: Telo.Application\n" }, { relativePath: "short.yaml", contents: "x" }]));
    execFileSync(command[0]!, [...command.slice(1), "xzf", join(dir, "bundle.tgz"), "-C", dir]);
    expect(readFileSync(join(dir, long), "utf8")).toBe("kind: Telo.Application\n");
    expect(readFileSync(join(dir, "short.yaml"), "utf8")).toBe("x");
  });
});

describe("bundleArchive", () => {
  it("is a gzip of the tar archive that a real tar unpacks, base64 files decoded", async () => {
    const files = [
      { relativePath: "telo.yaml", contents: "kind: Telo.Application\nmetadata:\n  name: hello\n" },
      { relativePath: "assets/logo.png", contents: PNG.toString("base64"), encoding: "base64" as const },
      { relativePath: "docs/ünïcode.md", contents: "# ✓\n", encoding: "utf8" as const },
    ];
    const gz = await bundleArchive(files);
    expect(gunzipSync(gz)).toEqual(tarArchive(files));

    const dir = scratch();
    writeFileSync(join(dir, "bundle.tgz"), gz);
    execFileSync("tar", ["xzf", join(dir, "bundle.tgz"), "-C", dir]);
    expect(readFileSync(join(dir, "telo.yaml"), "utf8")).toBe(files[0]!.contents);
    expect(readFileSync(join(dir, "assets/logo.png"))).toEqual(PNG);
    expect(readFileSync(join(dir, "docs/ünïcode.md"), "utf8")).toBe("# ✓\n");
    const listing = execFileSync("tar", ["tvzf", join(dir, "bundle.tgz")], { encoding: "utf8" });
    expect(listing).toMatch(/^-rw-r--r-- /m);
  });

  it("is an empty archive for an empty bundle", async () => {
    expect(gunzipSync(await bundleArchive([]))).toEqual(Buffer.alloc(1024));
  });
});
