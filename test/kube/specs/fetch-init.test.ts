import { execFileSync } from "node:child_process";
import { chmodSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { bundleArchive } from "../../../src/kube/bundle/bundle-archive.ts";
import { fetchInitContainer } from "../../../src/kube/specs/fetch-init.ts";

const scratchDirs: string[] = [];
afterEach(() => {
  for (const dir of scratchDirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

describe("fetchInitContainer", () => {
  it("unpacks the archive its URL serves, passing the URL to wget untouched by the shell", async () => {
    const root = mkdtempSync(join(tmpdir(), "fetch-init-"));
    scratchDirs.push(root);
    const target = join(root, "app");
    execFileSync("mkdir", ["-p", target, join(root, "bin")]);
    writeFileSync(join(root, "bundle.tgz"), await bundleArchive([{ relativePath: "apps/telo.yaml", contents: "kind: Telo.Application\n" }]));
    // A stand-in wget: records its arguments and "downloads" the prepared archive to the -O path.
    writeFileSync(
      join(root, "bin", "wget"),
      `#!/bin/sh\nprintf '%s\\n' "$@" > "${root}/wget-args"\ncp "${root}/bundle.tgz" "$2"\n`,
    );
    chmodSync(join(root, "bin", "wget"), 0o755);

    const hostileUrl = 'http://runner:8063/internal/bundles/x?token=ab"; touch pwned; echo "$(id)`id`';
    const container = fetchInitContainer({
      name: "body-fetch",
      image: "busybox:stable",
      url: hostileUrl,
      volume: "app",
      mountPath: target,
      securityContext: {},
    });
    const [shell, flag] = container.command!;
    execFileSync(shell!, [flag!, container.args![0]!.replaceAll("/tmp/archive.tgz", `${root}/archive.tgz`)], {
      cwd: root,
      env: { PATH: `${root}/bin:${process.env.PATH}`, ...Object.fromEntries(container.env!.map((e) => [e.name, e.value!])) },
    });

    expect(readFileSync(join(target, "apps/telo.yaml"), "utf8")).toBe("kind: Telo.Application\n");
    expect(readFileSync(join(root, "wget-args"), "utf8").split("\n")).toEqual(["-qO", `${root}/archive.tgz`, hostileUrl, ""]);
    expect(() => readFileSync(join(root, "pwned"))).toThrow();
  });
});
