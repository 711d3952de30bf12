// One simulated container process: the program its annotations choose (by default `cat` on a
// terminal), its stdin/stdout/stderr, its log, and how it reacts to signals. Servers it runs
// (ports, kernel debug stream, workspace surface) are started by the kubelet beside it.
import { EventEmitter } from "node:events";
import type { ContainerBehaviour } from "./behaviour.ts";
import { runScript } from "./commands.ts";
import type { ContainerFs } from "./container-fs.ts";
import { imageProgram } from "./image-program.ts";
import { LogBuffer } from "./logbuffer.ts";
import { parseCommandLine, type Script } from "./shell.ts";
import { LineDiscipline, onlcr } from "./tty.ts";

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
  logLimitBytes: number;
}

const SIGNAL_EXIT: Record<string, number> = { SIGINT: 130, SIGQUIT: 131, SIGTERM: 143, SIGKILL: 137 };

export class ContainerProcess extends EventEmitter<{ exit: [ExitStatus] }> {
  readonly logs: LogBuffer;
  private readonly sinks = new Set<OutputSink>();
  private readonly discipline?: LineDiscipline;
  private stdinOpen: boolean;
  private timer?: NodeJS.Timeout;
  /** A program other than the default `cat` runs (a script, a scripted exit): EOF on stdin does not end it. */
  private program = false;
  private status?: ExitStatus;

  constructor(
    readonly options: ContainerOptions,
    readonly behaviour: ContainerBehaviour,
  ) {
    super();
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
    const b = this.behaviour;
    for (const p of b.problems) this.print("stderr", Buffer.from(`[sim] ignored annotation ${p}\n`));
    if (b.output) this.print("stdout", Buffer.from(b.output));
    if (b.stderr) this.print("stderr", Buffer.from(b.stderr));
    const scripted = b["exit-code"] !== undefined || b["run-ms"] !== undefined || b.oom || b.crash;
    const script = parseCommandLine(this.options.argv, this.options.env) ?? imageProgram(this.options.image, this.options.argv);
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
    } else if (!this.options.stdin && !this.options.server) {
      // `cat` with no stdin reads EOF at once: a plain container without stdin just completes.
      setImmediate(() => this.exit({ exitCode: 0, reason: "Completed" }));
    }
  }

  /** Runs the command line's script; its end (or `exit`) ends the container, as `sh -c` would. */
  private async run(script: Script): Promise<void> {
    this.program = true;
    const ended = new AbortController();
    this.once("exit", () => ended.abort());
    const code = await runScript(script, {
      stdout: (b) => this.print("stdout", b),
      stderr: (b) => this.print("stderr", b),
      sleep: (ms) => new Promise((r) => (this.timer = setTimeout(r, ms))),
      fs: this.options.fs,
      signal: ended.signal,
    });
    this.exit({ exitCode: code, reason: code === 0 ? "Completed" : "Error" });
  }

  /** Program output: through ONLCR on a terminal, into the log and to attached clients. */
  print(stream: "stdout" | "stderr", data: Buffer): void {
    if (this.options.tty) this.emitOutput("stdout", onlcr(data));
    else this.emitOutput(stream, data);
  }

  private emitOutput(stream: "stdout" | "stderr", data: Buffer): void {
    if (!this.running || data.length === 0) return;
    this.logs.append(stream, data);
    for (const s of this.sinks) s[stream](data);
  }

  attach(sink: OutputSink): () => void {
    this.sinks.add(sink);
    return () => this.sinks.delete(sink);
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
    if (!this.options.server && !this.program) this.exit({ exitCode: 0, reason: "Completed" });
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

  exit(status: ExitStatus): void {
    if (!this.running) return;
    clearTimeout(this.timer);
    this.status = status;
    this.logs.end();
    for (const s of this.sinks) s.end();
    this.sinks.clear();
    this.emit("exit", status);
  }
}
