// Runs a parsed shell script (shell.ts) inside a simulated container: echo, sleep, exit, true,
// false, `set -e`, `cat FILE…`, and busybox's `wget` and `tar x` against the container's
// filesystem, with busybox's messages and exit codes. `&&`, `||` and errexit behave as in sh.
import { gunzipSync } from "node:zlib";
import type { ContainerFs } from "./container-fs.ts";
import { fetchUrl } from "./download.ts";
import { type Script, tarArgs, wgetArgs } from "./shell.ts";
import { readTar } from "./tar.ts";

export interface ShellIo {
  stdout(data: Buffer): void;
  stderr(data: Buffer): void;
  /** A pause that ends with the process (rejecting or never resolving is the caller's choice). */
  sleep(ms: number): Promise<void>;
  fs: ContainerFs;
  /** Aborted when the process ends (a download in flight stops). */
  signal: AbortSignal;
}

type Outcome = { status: number; exit?: boolean };

/** The exit code of the script, as `sh -c` would end. */
export async function runScript(script: Script, io: ShellIo): Promise<number> {
  let status = 0;
  let errexit = false;
  for (let i = 0; i < script.length; i++) {
    const cmd = script[i]!;
    if ((cmd.after === "&&" && status !== 0) || (cmd.after === "||" && status === 0)) continue;
    const [program, ...args] = cmd.argv;
    if (program === "set") {
      for (const flag of args) if (flag.includes("e")) errexit = flag.startsWith("-");
      status = 0;
      continue;
    }
    let outcome: Outcome;
    try {
      outcome = await run(program!, args, io);
    } catch (err) {
      // Whatever a command line holds, the simulated process fails; the simulator stays up.
      io.stderr(Buffer.from(`sh: ${program}: ${err instanceof Error ? err.message : String(err)}\n`));
      outcome = { status: 1 };
    }
    if (io.signal.aborted) return status;
    status = outcome.status;
    if (outcome.exit) return status;
    // errexit spares a command whose status an `&&` or `||` after it tests.
    const next = script[i + 1];
    if (errexit && status !== 0 && (next === undefined || next.after === ";")) return status;
  }
  return status;
}

async function run(program: string, args: string[], io: ShellIo): Promise<Outcome> {
  const say = (stream: "stdout" | "stderr", text: string) => io[stream](Buffer.from(text));
  switch (program) {
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
    case "wget":
      return wget(args, io);
    case "tar":
      return tar(args, io);
    default:
      // parseCommandLine admits only the programs above
      throw new Error(`no such program in the simulated shell: ${program}`);
  }
}

async function wget(args: string[], io: ShellIo): Promise<Outcome> {
  const { url, output } = wgetArgs(args)!;
  const fetched = await fetchUrl(url, io.signal);
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
