// One simulated container process: the program its annotations choose (by default `cat` on a
// terminal), its stdin/stdout/stderr, its log, and how it reacts to signals. Servers it runs
// (ports, kernel debug stream, workspace surface) are started by the kubelet beside it.
import { EventEmitter } from "node:events";
import type { ContainerBehaviour } from "./behaviour.ts";
import { runScript } from "./commands.ts";
import type { ContainerFs } from "./container-fs.ts";
import type { Download } from "./download.ts";
import { imageProgram } from "./image-program.ts";
import { LogBuffer } from "./logbuffer.ts";
import { parseCommandLine, type Script } from "./shell.ts";
import { LineDiscipline, onlcr, withoutLineEndCr } from "./tty.ts";

export interface ExitStatus {
  exitCode: number;
  reason: string;
  message?: string;
}

export interface OutputSink {
  stdout(data: Buffer): void;
  stderr(data: Buffer): void;
  /** The process ended; the attach session closes. */
  end(): void;
}

export interface ContainerOptions {
  name: string;
  tty: boolean;
  stdin: boolean;
  stdinOnce: boolean;
  /** Long-running by nature (listens on ports, serves a debug stream or the workspace). */
  server: boolean;
  /** The command line (after the kubelet's `$(VAR)` expansion) and image, for programs recognised by them. */
  argv: string[];
  image: string;
  /** The container's environment, which its shell expands `$VAR` from. */
  env: Record<string, string>;
  /** Its volumes and root filesystem. */
  fs: ContainerFs;
  /** Its downloads, over its pod's network. */
  download: Download;
  logLimitBytes: number;
  /**
   * The shell `exec`ed a program: the kubelet starts what that program serves and says how it
   * behaves (read from the pod as it is now). Without it, an exec ends the container as a
   * missing executable would.
   */
  exec?: (argv: string[], env: Record<string, string>) => Promise<{ behaviour: ContainerBehaviour; server: boolean }>;
}

const SIGNAL_EXIT: Record<string, number> = { SIGINT: 130, SIGQUIT: 131, SIGTERM: 143, SIGKILL: 137 };

export class ContainerProcess extends EventEmitter<{ exit: [ExitStatus] }> {
  readonly logs: LogBuffer;
  private readonly sinks = new Set<OutputSink>();
  private readonly discipline?: LineDiscipline;
  private stdinOpen: boolean;
  private timer?: NodeJS.Timeout;
  private ticker?: NodeJS.Timeout;
  /** A program other than the default `cat` runs (a script, a scripted exit): EOF on stdin does not end it. */
  private program = false;
  private status?: ExitStatus;
  /** Long-running by nature; an exec'd program decides anew. */
  private server: boolean;
  /** The running program's argv and env: the command line's, until the shell execs another. */
  private current = { argv: [] as string[], env: {} as Record<string, string> };

  constructor(
    readonly options: ContainerOptions,
    private behaviour: ContainerBehaviour,
  ) {
    super();
    this.server = options.server;
    this.current = { argv: options.argv, env: options.env };
    this.logs = new LogBuffer(options.logLimitBytes);
    this.stdinOpen = options.stdin;
    if (options.tty) {
      this.discipline = new LineDiscipline({
        echo: (b) => this.emitOutput("stdout", b),
        line: (b) => this.print("stdout", b),
        signal: (s) => this.signal(s),
        eof: () => this.closeStdin(),
      });
    }
  }

  get running(): boolean {
    return this.status === undefined;
  }

  get exitStatus(): ExitStatus | undefined {
    return this.status;
  }

  start(): void {
    this.begin(parseCommandLine(this.options.argv, this.options.env) ?? imageProgram(this.options.image, this.options.argv));
  }

  /** What the process does from now on: its behaviour's script, else the command line's, else `cat`. */
  private begin(script: Script | undefined): void {
    const b = this.behaviour;
    for (const p of b.problems) this.print("stderr", Buffer.from(`[sim] ignored annotation ${p}\n`));
    if (b.output) this.print("stdout", Buffer.from(b.output));
    if (b.stderr) this.print("stderr", Buffer.from(b.stderr));
    if (b["report-start"]) this.print("stdout", Buffer.from(startReport(this.current.argv, this.current.env, this.options.fs.mountedFiles("/app"))));
    clearInterval(this.ticker);
    if (b["tick-ms"] !== undefined) this.startTicking(b["tick-ms"]);
    const scripted = b["exit-code"] !== undefined || b["run-ms"] !== undefined || b.oom || b.crash;
    this.program = false;
    if (scripted) {
      const status: ExitStatus = b.oom
        ? { exitCode: 137, reason: "OOMKilled" }
        : b.crash
          ? { exitCode: 139, reason: "Error" }
          : { exitCode: b["exit-code"] ?? 0, reason: (b["exit-code"] ?? 0) === 0 ? "Completed" : "Error" };
      if (b.crash) this.print("stderr", Buffer.from("Segmentation fault (core dumped)\n"));
      this.program = true;
      this.timer = setTimeout(() => this.exit(status), b["run-ms"] ?? 0);
    } else if (script !== undefined) {
      void this.run(script);
    } else if (!this.options.stdin && !this.server) {
      // `cat` with no stdin reads EOF at once: a plain container without stdin just completes.
      setImmediate(() => this.exit({ exitCode: 0, reason: "Completed" }));
    }
  }

  /** Runs the command line's script; its end (or `exit`) ends the container, as `sh -c` would. */
  private async run(script: Script): Promise<void> {
    this.program = true;
    const ended = new AbortController();
    this.once("exit", () => ended.abort());
    const end = await runScript(
      script,
      {
        stdout: (b) => this.print("stdout", b),
        stderr: (b) => this.print("stderr", b),
        sleep: (ms) => new Promise((r) => (this.timer = setTimeout(r, ms))),
        fs: this.options.fs,
        download: this.options.download,
        signal: ended.signal,
      },
      this.options.env,
    );
    if (!this.running) return;
    if ("status" in end) return this.exit({ exitCode: end.status, reason: end.status === 0 ? "Completed" : "Error" });
    if (!this.options.exec) {
      this.print("stderr", Buffer.from(`sh: exec: ${end.exec[0]}: not found\n`));
      return this.exit({ exitCode: 127, reason: "Error" });
    }
    const next = await this.options.exec(end.exec, end.env);
    if (!this.running) return;
    // Same process, same terminal and log: only the program, its argv and env change.
    this.current = { argv: end.exec, env: end.env };
    this.behaviour = next.behaviour;
    this.server = next.server;
    this.begin(undefined);
  }

  /** Program output: through ONLCR on a terminal, into the log and to attached clients. */
  print(stream: "stdout" | "stderr", data: Buffer): void {
    if (this.options.tty) this.emitOutput("stdout", onlcr(data));
    else this.emitOutput(stream, data);
  }

  private emitOutput(stream: "stdout" | "stderr", data: Buffer): void {
    if (!this.running || data.length === 0) return;
    // containerd's log writer drops the CR that ends a terminal's line: the log shows LF where
    // the attach shows CR LF.
    this.logs.append(stream, this.options.tty ? withoutLineEndCr(data) : data);
    for (const s of this.sinks) s[stream](data);
  }

  /**
   * An attach session's output. A real node's runtime starts delivering to an attach a moment
   * after it is open; `attach-delay-ms` stretches that moment (what is printed in it reaches the
   * log only).
   */
  attach(sink: OutputSink): () => void {
    const delayMs = this.behaviour["attach-delay-ms"] ?? 0;
    if (delayMs === 0) this.sinks.add(sink);
    const timer = delayMs === 0 ? undefined : setTimeout(() => (this.running ? this.sinks.add(sink) : sink.end()), delayMs);
    return () => {
      clearTimeout(timer);
      this.sinks.delete(sink);
    };
  }

  writeStdin(data: Buffer): void {
    if (!this.running || !this.stdinOpen) return;
    if (this.discipline) this.discipline.input(data);
    else this.print("stdout", data);
  }

  /** EOF on stdin: `cat` finishes. */
  closeStdin(): void {
    if (!this.stdinOpen) return;
    this.stdinOpen = false;
    if (!this.server && !this.program) this.exit({ exitCode: 0, reason: "Completed" });
  }

  /** An attach session ended: stdin closes only for stdinOnce containers. */
  detached(): void {
    if (this.options.stdinOnce) this.closeStdin();
  }

  resize(cols: number, rows: number): void {
    if (this.behaviour["report-resize"]) this.print("stdout", Buffer.from(`[sim] terminal resized to ${cols}x${rows}\n`));
  }

  signal(name: "SIGINT" | "SIGQUIT" | "SIGTERM" | "SIGKILL"): void {
    if (!this.running) return;
    if (name === "SIGTERM" && this.behaviour["ignore-sigterm"]) return;
    this.exit({ exitCode: SIGNAL_EXIT[name]!, reason: "Error" });
  }

  /** A counter on stdout, `tick <n>` every `ms` from 1, while the program runs (output across a handover). */
  private startTicking(ms: number): void {
    let count = 0;
    this.ticker = setInterval(() => {
      count += 1;
      this.print("stdout", Buffer.from(`tick ${count}\n`));
    }, ms);
    this.ticker.unref();
  }

  exit(status: ExitStatus): void {
    if (!this.running) return;
    clearTimeout(this.timer);
    clearInterval(this.ticker);
    this.status = status;
    this.logs.end();
    for (const s of this.sinks) s.end();
    this.sinks.clear();
    this.emit("exit", status);
  }
}

/**
 * The `report-start` report: the program's argv, its environment (one sorted `NAME=value` per
 * line) and the files of its /app volume, so a test can compare what two ways of starting the
 * same program hand it.
 */
function startReport(argv: string[], env: Record<string, string>, files: Array<{ path: string; hash: string }>): string {
  const lines = Object.entries(env)
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    .map(([name, value]) => `[sim] env ${name}=${JSON.stringify(value)}\n`);
  const listed = files.map(({ path, hash }) => `[sim] file /app/${path} ${hash}\n`);
  return `[sim] argv ${JSON.stringify(argv)}\n${lines.join("")}${listed.join("")}`;
}
