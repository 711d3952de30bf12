// One simulated container process: the program its annotations choose (by default `cat` on a
// terminal), its stdin/stdout/stderr, its log, and how it reacts to signals. Servers it runs
// (ports, kernel debug stream, workspace surface) are started by the kubelet beside it.
import { EventEmitter } from "node:events";
import type { ContainerBehaviour } from "./behaviour.ts";
import { download, downloadUrl } from "./download.ts";
import { imageProgram, interpret, type Step } from "./script.ts";
import { LogBuffer } from "./logbuffer.ts";
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
  /** The command line and image, for programs recognised by them (a `wget` download, Kaniko). */
  argv: string[];
  image: string;
  logLimitBytes: number;
}

const SIGNAL_EXIT: Record<string, number> = { SIGINT: 130, SIGQUIT: 131, SIGTERM: 143, SIGKILL: 137 };

export class ContainerProcess extends EventEmitter<{ exit: [ExitStatus] }> {
  readonly logs: LogBuffer;
  private readonly sinks = new Set<OutputSink>();
  private readonly discipline?: LineDiscipline;
  private stdinOpen: boolean;
  private timer?: NodeJS.Timeout;
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
    const url = downloadUrl(this.options.argv);
    const steps = interpret(this.options.argv) ?? imageProgram(this.options.image, this.options.argv);
    if (scripted) {
      const status: ExitStatus = b.oom
        ? { exitCode: 137, reason: "OOMKilled" }
        : b.crash
          ? { exitCode: 139, reason: "Error" }
          : { exitCode: b["exit-code"] ?? 0, reason: (b["exit-code"] ?? 0) === 0 ? "Completed" : "Error" };
      if (b.crash) this.print("stderr", Buffer.from("Segmentation fault (core dumped)\n"));
      this.timer = setTimeout(() => this.exit(status), b["run-ms"] ?? 0);
    } else if (url !== undefined) {
      const aborted = new AbortController();
      this.once("exit", () => aborted.abort());
      void download(url, this.options.argv, aborted.signal).then((r) => {
        if (r.stderr) this.print("stderr", Buffer.from(r.stderr));
        this.exit({ exitCode: r.exitCode, reason: r.exitCode === 0 ? "Completed" : "Error" });
      });
    } else if (steps !== undefined) {
      void this.run(steps);
    } else if (!this.options.stdin && !this.options.server) {
      // `cat` with no stdin reads EOF at once: a plain container without stdin just completes.
      setImmediate(() => this.exit({ exitCode: 0, reason: "Completed" }));
    }
  }

  /** Runs recognised shell steps; `exit` (or the end) ends the container, as `sh -c` would. */
  private async run(steps: Step[]): Promise<void> {
    for (const s of steps) {
      if (!this.running) return;
      if ("echo" in s) this.print("stdout", Buffer.from(s.echo));
      else if ("sleepMs" in s) await new Promise((r) => (this.timer = setTimeout(r, s.sleepMs)));
      else {
        this.exit({ exitCode: s.exit, reason: s.exit === 0 ? "Completed" : "Error" });
        return;
      }
    }
    this.exit({ exitCode: 0, reason: "Completed" });
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
    if (!this.options.server && this.timer === undefined) this.exit({ exitCode: 0, reason: "Completed" });
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
