import { execFileSync } from "node:child_process";
import { chmodSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { watchPod } from "../../../src/kube/specs/watch-pod.ts";
import { APP_LIMITS, CREATED_AT, PLAIN_SETTINGS, SESSION_ID } from "../fixtures.ts";

const scratchDirs: string[] = [];
afterEach(() => {
  for (const dir of scratchDirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

describe("watch app container script", () => {
  it("execs telo on the entry named by env, however strange its path", () => {
    const root = mkdtempSync(join(tmpdir(), "watch-app-"));
    scratchDirs.push(root);
    const entry = join(root, 'my app/"$(touch pwned)".yaml');
    mkdirSync(join(root, "my app"), { recursive: true });
    writeFileSync(entry, "kind: Telo.Application\n");
    mkdirSync(join(root, "bin"));
    writeFileSync(join(root, "bin", "telo"), `#!/bin/sh\nprintf '%s\\n' "$@" > "${root}/telo-args"\n`);
    chmodSync(join(root, "bin", "telo"), 0o755);

    const pod = watchPod({
      session: {
        sessionId: SESSION_ID,
        mode: "watch",
        createdAt: CREATED_AT,
        apps: [{ name: "api", entryRelativePath: "api.yaml", ports: [], io: "tty" }],
        inspect: true,
        selfContained: false,
        config: {},
      },
      env: {},
      settings: PLAIN_SETTINGS,
      limits: APP_LIMITS,
      ttlSeconds: 21600,
      defaultImage: "telorun/node:latest-slim",
      nameSuffix: "x",
      workspaceConfigMap: "telo-workspace-app-0123456789ab",
    });
    const app = pod.spec!.containers.find((c) => c.name === "app-api")!;
    const env = Object.fromEntries(app.env!.map((e) => [e.name, e.value!]));
    const [shell, flag, script] = app.command!;
    execFileSync(shell!, [flag!, script!], {
      cwd: root,
      env: { PATH: `${root}/bin:${process.env.PATH}`, TELO_INSPECT_ADDR: env.TELO_INSPECT_ADDR!, TELO_ENTRY: entry },
    });

    expect(env.TELO_INSPECT_ADDR).toBe("0.0.0.0:9230");
    expect(readFileSync(join(root, "telo-args"), "utf8").split("\n")).toEqual([
      "run",
      "--watch",
      "--inspect",
      "0.0.0.0:9230",
      "--no-open",
      entry,
      "",
    ]);
    expect(() => readFileSync(join(root, "pwned"))).toThrow();
  });
});
