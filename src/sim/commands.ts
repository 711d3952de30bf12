// Runs a parsed shell script (shell.ts) inside a simulated container: echo, sleep, exit, true,
// false, `set -e`, `cat FILE…`, `rm`, `until`/`while` loops, `.` (a script file read and run in
// this shell), `export`/`unset`, `exec` (the process becomes the program: the caller decides what
// it then does), and busybox's `wget` and `tar x` against the container's filesystem, with
// busybox's messages and exit codes. `&&`, `||` and errexit behave as in sh.
import { gunzipSync } from "node:zlib";
import type { ContainerFs } from "./container-fs.ts";
import type { Download } from "./download.ts";
import { applet, type Command, parseShell, rmArgs, type Script, tarArgs, wgetArgs } from "./shell.ts";
import { readTar } from "./tar.ts";

export interface ShellIo {
  stdout(data: Buffer): void;
  stderr(data: Buffer): void;
  /** A pause that ends with the process (rejecting or never resolving is the caller's choice). */
  sleep(ms: number): Promise<void>;
  fs: ContainerFs;
  /** busybox wget's GET, over the pod's network. */
  download: Download;
  /** Aborted when the process ends (a download in flight stops). */
  signal: AbortSignal;
}

/** How the script ended: with a status (its last, or `exit`'s), or by `exec`ing a program with the shell's env. */
export type ScriptEnd = { status: number } | { exec: string[]; env: Record<string, string> };

type Outcome = { status: number; exit?: boolean; exec?: string[] };

/** One shell: its variables (the container's env, then what `export`/`unset` change) and errexit. */
type Shell = { env: Record<string, string>; errexit: boolean; io: ShellIo };

/** The script's end, as `sh -c` would end; `env` is the shell's environment at start. */
export async function runScript(script: Script, io: ShellIo, env: Record<string, string> = {}): Promise<ScriptEnd> {
  const shell: Shell = { env: { ...env }, errexit: false, io };
  const outcome = await runList(script, shell, false);
  return outcome.exec ? { exec: outcome.exec, env: shell.env } : { status: outcome.status };
}

/** Runs a list; `tested` when its status is a loop's condition, which errexit spares. */
async function runList(script: Script, shell: Shell, tested: boolean): Promise<Outcome> {
  let status = 0;
  for (let i = 0; i < script.length; i++) {
    const node = script[i]!;
    if ((node.after === "&&" && status !== 0) || (node.after === "||" && status === 0)) continue;
    const outcome = node.kind === undefined ? await runCommand(node, shell) : await runLoop(node.kind, node.condition, node.body, shell);
    if (shell.io.signal.aborted) return { status };
    status = outcome.status;
    if (outcome.exit || outcome.exec) return outcome;
    // errexit spares a command whose status an `&&` or `||` after it tests, and a loop's condition.
    const next = script[i + 1];
    if (shell.errexit && !tested && status !== 0 && (next === undefined || next.after === ";")) return { status, exit: true };
  }
  return { status };
}

async function runLoop(kind: "until" | "while", condition: Script, body: Script, shell: Shell): Promise<Outcome> {
  let status = 0;
  for (;;) {
    const tested = await runList(condition, shell, true);
    if (tested.exit || tested.exec || shell.io.signal.aborted) return tested;
    if ((kind === "until") === (tested.status === 0)) return { status };
    const ran = await runList(body, shell, false);
    if (ran.exit || ran.exec || shell.io.signal.aborted) return ran;
    status = ran.status;
  }
}

async function runCommand(cmd: Command, shell: Shell): Promise<Outcome> {
  const [program, ...args] = applet(cmd.argv);
  const io: ShellIo = {
    ...shell.io,
    stdout: cmd.discard?.includes("stdout") ? () => undefined : shell.io.stdout,
    stderr: cmd.discard?.includes("stderr") ? () => undefined : shell.io.stderr,
  };
  try {
    return await run(program!, args, shell, io);
  } catch (err) {
    // Whatever a command line holds, the simulated process fails; the simulator stays up.
    io.stderr(Buffer.from(`sh: ${program}: ${err instanceof Error ? err.message : String(err)}\n`));
    return { status: 1 };
  }
}

/** One command; `io` is the shell's with this command's redirections applied. */
async function run(program: string, args: string[], shell: Shell, io: ShellIo): Promise<Outcome> {
  const say = (stream: "stdout" | "stderr", text: string) => io[stream](Buffer.from(text));
  switch (program) {
    case "set":
      for (const flag of args) if (flag.includes("e")) shell.errexit = flag.startsWith("-");
      return { status: 0 };
    case "echo":
      say("stdout", args[0] === "-n" ? args.slice(1).join(" ") : `${args.join(" ")}\n`);
      return { status: 0 };
    case "true":
      return { status: 0 };
    case "false":
      return { status: 1 };
    case "sleep":
      await io.sleep(Number(args[0]) * 1000);
      return { status: 0 };
    case "exit":
      return { status: args.length === 0 ? 0 : Number(args[0]), exit: true };
    case "export":
      for (const word of args) {
        const at = word.indexOf("=");
        shell.env[word.slice(0, at)] = word.slice(at + 1);
      }
      return { status: 0 };
    case "unset":
      for (const name of args) delete shell.env[name];
      return { status: 0 };
    case "exec":
      return { status: 0, exec: args };
    case ".":
      return source(args[0]!, shell);
    case "cat": {
      let status = 0;
      for (const file of args) {
        const data = io.fs.read(file);
        if (typeof data === "string") {
          say("stderr", `cat: can't open '${file}': ${data}\n`);
          status = 1;
        } else io.stdout(data);
      }
      return { status };
    }
    case "rm":
      return rm(args, io);
    case "wget":
      return wget(args, io);
    case "tar":
      return tar(args, io);
    default:
      // parseShell admits only the programs above
      throw new Error(`no such program in the simulated shell: ${program}`);
  }
}

/** `. FILE`: the file is read now, parsed with the shell's variables of now, and run in this shell. */
async function source(file: string, shell: Shell): Promise<Outcome> {
  const text = shell.io.fs.read(file);
  if (typeof text === "string") {
    shell.io.stderr(Buffer.from(`sh: .: line 1: can't open '${file}': ${text}\n`));
    return { status: 2, exit: true };
  }
  const script = parseShell(text.toString("utf8"), shell.env);
  if (script === undefined) {
    // Beyond the subset (or empty): the simulator cannot say what sh would do, so it says so.
    shell.io.stderr(Buffer.from(`sh: ${file}: not a script the simulated shell runs\n`));
    return { status: 2, exit: true };
  }
  return runList(script, shell, false);
}

function rm(args: string[], io: ShellIo): Outcome {
  const { files, force } = rmArgs(args)!;
  let status = 0;
  for (const file of files) {
    const failed = io.fs.remove(file);
    if (failed === undefined || (force && failed === "No such file or directory")) continue;
    io.stderr(Buffer.from(`rm: can't remove '${file}': ${failed}\n`));
    status = 1;
  }
  return { status };
}

async function wget(args: string[], io: ShellIo): Promise<Outcome> {
  const { url, output } = wgetArgs(args)!;
  const fetched = await io.download(url, io.signal);
  if ("error" in fetched) {
    io.stderr(Buffer.from(fetched.error));
    return { status: 1 };
  }
  if (output === "-") {
    io.stdout(fetched.body);
    return { status: 0 };
  }
  const failed = io.fs.write(output, fetched.body);
  if (failed) {
    io.stderr(Buffer.from(`wget: can't open '${output}': ${failed}\n`));
    return { status: 1 };
  }
  return { status: 0 };
}

function tar(args: string[], io: ShellIo): Outcome {
  const { file, gzip, directory } = tarArgs(args)!;
  const fail = (text: string): Outcome => {
    io.stderr(Buffer.from(text));
    return { status: 1 };
  };
  const archive = io.fs.read(file);
  if (typeof archive === "string") return fail(`tar: can't open '${file}': ${archive}\n`);
  let plain = archive;
  if (gzip) {
    try {
      plain = gunzipSync(archive);
    } catch {
      return fail("tar: invalid magic\ntar: short read\n");
    }
  }
  const entries = readTar(plain);
  if ("error" in entries) return fail(`${entries.error}\n`);
  for (const entry of entries) {
    const target = directory === undefined ? entry.path : `${directory.replace(/\/+$/, "")}/${entry.path}`;
    const failed = io.fs.write(target, entry.data);
    if (failed) return fail(`tar: can't open '${entry.path}': ${failed}\n`);
  }
  return { status: 0 };
}
