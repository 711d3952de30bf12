/** The CLI's pure parts: the command line, exit codes, the progress line, the console switch. */
import { mkdtemp, mkdir, rm, symlink, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { DEFAULT_URL, parseCommandLine } from "../../src/cli/args.ts";
import { readBundle } from "../../src/cli/bundle.ts";
import { appExitCode, exitCodeFor } from "../../src/cli/exit-code.ts";
import { progressLine } from "../../src/cli/progress.ts";
import { loadConsoleConfig } from "../../src/config/console.ts";

describe("parseCommandLine", () => {
  it("parses run with its options and the runner URL from the environment", () => {
    const parsed = parseCommandLine(
      ["run", "app", "--image", "x:1", "--pull", "always", "--env", "A=1=2", "--simulate", "exit-code=3", "--json"],
      { K8S_RUNNER_URL: "http://runner:8062" },
    );
    expect(parsed).toEqual({
      ok: true,
      command: {
        name: "run",
        global: { url: "http://runner:8062", json: true, acceptTerms: undefined },
        run: { dir: "app", image: "x:1", pullPolicy: "always", entry: undefined, env: { A: "1=2" }, simulate: { "exit-code": "3" } },
      },
    });
  });

  it("defaults the URL and the pull policy, and --url wins over the environment", () => {
    expect(parseCommandLine(["probe", "--image", "i"], {})).toMatchObject({
      command: { global: { url: DEFAULT_URL }, pullPolicy: "missing" },
    });
    expect(parseCommandLine(["sessions", "--url", "https://a.example"], { K8S_RUNNER_URL: "http://b" })).toMatchObject({
      command: { global: { url: "https://a.example" } },
    });
  });

  it.each([
    [["nope"], "unknown command 'nope'"],
    [["logs"], "'logs' needs <id>"],
    [["stop", "a", "b"], "unexpected argument 'b'"],
    [["stop", "a", "--image", "x"], "'stop' takes no --image"],
    [["run", "d", "--pull", "sometimes"], '--pull "sometimes": expected missing, always or never'],
    [["run", "d", "--env", "NOEQUALS"], '--env "NOEQUALS": expected KEY=VALUE'],
    [["sessions", "--url", "ftp://x"], '--url "ftp://x": expected an http(s) URL'],
    [["probe"], "'probe' needs --image <ref>"],
    [["sessions", "--bogus"], "Unknown option '--bogus'"],
    [["serve", "--url", "http://a"], "'serve' takes no --url: it is configured by environment variables"],
    [["supervisor", "x"], "unexpected argument 'x'"],
  ])("refuses %j: %s", (argv, message) => {
    const parsed = parseCommandLine(argv, {});
    expect(parsed.ok).toBe(false);
    expect((parsed as { message: string }).message).toContain(message);
  });

  it("parses the runner's own processes, which take nothing", () => {
    for (const name of ["serve", "supervisor"]) expect(parseCommandLine([name], {})).toEqual({ ok: true, command: { name } });
  });

  it("answers help for no command, help and -h", () => {
    for (const argv of [[], ["help"], ["-h"], ["run", "--help"]]) expect(parseCommandLine(argv, {})).toEqual({ ok: true, command: { name: "help" } });
  });
});

describe("exit codes", () => {
  it("is the app's code for an exit, including a non-zero one reported as failed", () => {
    expect(exitCodeFor({ kind: "exited", code: 0 }, false)).toBe(0);
    expect(exitCodeFor({ kind: "failed", message: 'container "session" failed: Error (exit code 3)' }, false)).toBe(3);
    expect(exitCodeFor({ kind: "failed", message: 'container "session" failed: OOMKilled (exit code 137)' }, false)).toBe(137);
  });

  it("is 1 for a failure that is not the app's exit, and 130/143 for a stop", () => {
    expect(appExitCode({ kind: "failed", message: 'init container "body-fetch" failed: Error (exit code 1): wget: x' })).toBeUndefined();
    expect(exitCodeFor({ kind: "failed", message: 'container "session" waiting: ImagePullBackOff' }, false)).toBe(1);
    expect(exitCodeFor({ kind: "stopped" }, true)).toBe(130);
    expect(exitCodeFor({ kind: "stopped" }, false)).toBe(143);
  });
});

describe("progressLine", () => {
  it("shows the spinner frame, phase, message and whole seconds for the clock given", () => {
    const state = { phase: "build" as const, message: "Building image\nstep 2", since: 1_000 };
    expect(progressLine(state, 1_000, 80)).toBe("⠋ build: Building image step 2 (0s)");
    expect(progressLine(state, 13_150, 80)).toBe("⠙ build: Building image step 2 (12s)");
  });

  it("fits one row of the terminal", () => {
    const line = progressLine({ phase: "provision", message: "x".repeat(200), since: 0 }, 0, 40);
    expect(line).toHaveLength(39);
    expect(line.endsWith("…")).toBe(true);
  });
});

describe("readBundle", () => {
  it("reads text as UTF-8 and other bytes as base64, skipping node_modules, .git and symlinks", async () => {
    const dir = await mkdtemp(join(tmpdir(), "k8s-runner-bundle-"));
    try {
      await writeFile(join(dir, "telo.yaml"), "kind: Telo.Application\n");
      await mkdir(join(dir, "lib"));
      await writeFile(join(dir, "lib", "logo.bin"), Buffer.from([0xff, 0xfe, 0x00]));
      await mkdir(join(dir, "node_modules"));
      await writeFile(join(dir, "node_modules", "x.js"), "skip");
      await symlink("/etc/hostname", join(dir, "outside"));
      expect(await readBundle(dir, undefined)).toEqual({
        entryRelativePath: "telo.yaml",
        files: [
          { relativePath: "lib/logo.bin", contents: "//4A", encoding: "base64" },
          { relativePath: "telo.yaml", contents: "kind: Telo.Application\n" },
        ],
      });
      await expect(readBundle(dir, "main.yaml")).rejects.toThrow(`${dir} has no main.yaml (name the entry file with --entry)`);
      await expect(readBundle(join(dir, "telo.yaml"), undefined)).rejects.toThrow("is not a directory");
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});

describe("RUNNER_CONSOLE", () => {
  it("is off by default and refuses a value that is not a boolean", () => {
    expect(loadConsoleConfig({})).toEqual({ enabled: false });
    expect(loadConsoleConfig({ RUNNER_CONSOLE: "true" })).toEqual({ enabled: true });
    expect(() => loadConsoleConfig({ RUNNER_CONSOLE: "perhaps" })).toThrow(/RUNNER_CONSOLE/);
  });
});
