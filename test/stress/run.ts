/**
 * `npm run test:stress -- [--busy N] [--runs R] [--minutes M] <test files…>`: runs the chosen
 * test files R times (default 3) beside N busy loops (default 3, each a process spinning on a
 * core) that it starts and stops itself, so races that only show when the machine is slow are
 * caught before CI. Bounded: past M minutes (default 15) the run in progress is stopped and
 * counted as failed. Exits 1 when any run failed; the loops are always stopped.
 */
import { type ChildProcess, spawn } from "node:child_process";

type Options = { busy: number; runs: number; minutes: number; files: string[] };

export function parseArgs(argv: string[]): Options {
  const options: Options = { busy: 3, runs: 3, minutes: 15, files: [] };
  for (let i = 0; i < argv.length; i += 1) {
    const arg = argv[i]!;
    const flag = /^--(busy|runs|minutes)$/.exec(arg)?.[1] as "busy" | "runs" | "minutes" | undefined;
    if (flag === undefined) {
      options.files.push(arg);
      continue;
    }
    const value = Number(argv[(i += 1)]);
    if (!Number.isInteger(value) || value < (flag === "busy" ? 0 : 1)) throw new Error(`--${flag} needs a whole number, got '${argv[i]}'`);
    options[flag] = value;
  }
  if (options.files.length === 0) throw new Error("name the test files to run under load");
  return options;
}

function busyLoop(): ChildProcess {
  return spawn(process.execPath, ["-e", "for (;;) {}"], { stdio: "ignore" });
}

function stop(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => {
    child.once("exit", () => resolve());
    child.kill("SIGKILL");
  });
}

/** One vitest run of the files; resolves true when it passed, false when it failed or ran out of time. */
function runOnce(files: string[], deadline: number): Promise<boolean> {
  return new Promise((resolve) => {
    const vitest = spawn(process.execPath, ["node_modules/vitest/vitest.mjs", "run", ...files], { stdio: "inherit" });
    const timer = setTimeout(() => {
      process.stderr.write("[stress] out of time: stopping this run\n");
      vitest.kill("SIGTERM");
    }, Math.max(0, deadline - Date.now()));
    vitest.once("exit", (code) => {
      clearTimeout(timer);
      resolve(code === 0);
    });
  });
}

const options = parseArgs(process.argv.slice(2));
const deadline = Date.now() + options.minutes * 60_000;
const loops = Array.from({ length: options.busy }, busyLoop);
const results: boolean[] = [];
const stopLoops = () => Promise.all(loops.map(stop));
process.once("SIGINT", () => void stopLoops().then(() => process.exit(130)));
try {
  for (let run = 1; run <= options.runs && Date.now() < deadline; run += 1) {
    process.stderr.write(`[stress] run ${run}/${options.runs} beside ${options.busy} busy loops\n`);
    results.push(await runOnce(options.files, deadline));
  }
} finally {
  await stopLoops();
}
const failed = results.filter((passed) => !passed).length;
process.stderr.write(`[stress] ${results.length - failed} of ${results.length} runs passed${results.length < options.runs ? ` (${options.runs - results.length} not started: out of time)` : ""}\n`);
process.exit(failed > 0 || results.length === 0 ? 1 : 0);
