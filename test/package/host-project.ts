/**
 * What test/package/install.test.ts needs around a project that installs the package: the
 * clone packed and installed as a user does it, code blocks taken from the docs as they are
 * written, and the processes it starts (each leads its own group, so a failed test kills every
 * process of it).
 */
import { type ChildProcess, execFile, spawn } from "node:child_process";
import { readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { promisify } from "node:util";
import { REPO_ROOT } from "../deploy/render.ts";

const run = promisify(execFile);

/** Node's own directory first, so `#!/usr/bin/env node` and npm find this Node. */
export const PATH = `${dirname(process.execPath)}:${process.env.PATH ?? ""}`;

/** The first fenced block of `lang` under the heading `## <heading>` of a page of the clone. */
export function codeBlock(page: string, heading: string, lang = "ts"): string {
  const text = readFileSync(join(REPO_ROOT, page), "utf8");
  const at = text.indexOf(`\n## ${heading}\n`);
  if (at < 0) throw new Error(`${page} has no heading "## ${heading}"`);
  const block = new RegExp("```" + lang + "\\n([\\s\\S]*?)```").exec(text.slice(at));
  if (!block) throw new Error(`${page} "${heading}" has no \`\`\`${lang} block`);
  return block[1]!;
}

/** npm, with the user's cache and no progress or audit noise; the registry only when the cache lacks something. */
export async function npm(cwd: string, args: string[], timeoutMs = 300_000): Promise<string> {
  const { stdout } = await run("npm", [...args, "--prefer-offline", "--no-audit", "--no-fund", "--loglevel=error"], {
    cwd,
    env: { ...process.env, PATH },
    timeout: timeoutMs,
    maxBuffer: 64 * 1024 * 1024,
  });
  return stdout;
}

/** `npm pack` of the clone into `into` (its prepack builds dist/); the tarball's path and npm's report. */
export async function packClone(into: string): Promise<{ tarball: string; size: number; unpackedSize: number; entryCount: number }> {
  const [report] = JSON.parse(await npm(REPO_ROOT, ["pack", "--json", "--pack-destination", into], 600_000)) as Array<{ filename: string; size: number; unpackedSize: number; entryCount: number }>;
  return { tarball: join(into, report!.filename), size: report!.size, unpackedSize: report!.unpackedSize, entryCount: report!.entryCount };
}

export type Started = { child: ChildProcess; output(): string; stop(): Promise<void> };

/** A process of the test, in a group of its own; its stdout and stderr kept for failure messages. */
export function start(command: string, args: string[], options: { cwd: string; env: NodeJS.ProcessEnv }): Started {
  const child = spawn(command, args, { cwd: options.cwd, env: options.env, stdio: ["ignore", "pipe", "pipe"], detached: true });
  let output = "";
  child.stdout!.on("data", (chunk: Buffer) => (output += chunk.toString()));
  child.stderr!.on("data", (chunk: Buffer) => (output += chunk.toString()));
  const gone = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  return {
    child,
    output: () => output,
    stop: async () => {
      try {
        process.kill(-child.pid!, "SIGKILL");
      } catch {
        // already gone
      }
      await gone;
    },
  };
}

/** Resolves with the exit code once `child` exits by itself. */
export function exitOf(child: ChildProcess): Promise<number | null> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve(child.exitCode);
  return new Promise((resolve) => child.once("exit", (code) => resolve(code)));
}

/** A script run with the project's Node in `cwd`; rejects with its output on a non-zero exit. */
export async function node(cwd: string, args: string[], env: NodeJS.ProcessEnv = {}, timeoutMs = 120_000): Promise<string> {
  const { stdout } = await run(process.execPath, args, { cwd, env: { PATH, ...env }, timeout: timeoutMs, maxBuffer: 16 * 1024 * 1024 });
  return stdout;
}
