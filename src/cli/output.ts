/**
 * Where a streaming command's output goes. Humans get the app's bytes on stdout/stderr as
 * they are, progress and the Telo version each run's kernel reports on a TTY, and one line
 * per failure on stderr; `--json` gets one JSON
 * object per line on stdout (session, event, output, exit), so a script reads a single stream.
 */
import { TextDecoder } from "node:util";
import type { ByteStreamTag, RouteEvent, RunEvent, RunStatus } from "../contract/wire.ts";
import { appExitCode } from "./exit-code.ts";
import { ProgressDisplay, type ProgressStream } from "./progress.ts";

export interface OutputSink {
  session(created: { sessionId: string; streamUrl: string; createdAt: string }): void;
  event(id: number, event: RunEvent): void;
  output(tag: ByteStreamTag, seq: number, bytes: Uint8Array): void;
  notice(text: string): void;
  exit(code: number, status: RunStatus | undefined): void;
}

export type Streams = { stdout: NodeJS.WritableStream; stderr: ProgressStream & NodeJS.WritableStream & { isTTY?: boolean } };

/** A route's state as one line: `route https://3000-x.example.test (app:3000) unprogrammed: why`. */
export function routeLine(event: RouteEvent): string {
  const reason = event.reason === undefined ? "" : `: ${event.reason}`;
  return `route ${event.host} (${event.app ?? "agent"}:${event.port}) ${event.state}${reason}`;
}

export class HumanSink implements OutputSink {
  readonly #progress: ProgressDisplay | undefined;

  constructor(readonly streams: Streams) {
    this.#progress = streams.stderr.isTTY ? new ProgressDisplay(streams.stderr) : undefined;
  }

  /** The id, for `logs`/`stop` from another shell; on a terminal only (scripts use --json). */
  session(created: { sessionId: string }): void {
    if (this.streams.stderr.isTTY) this.streams.stderr.write(`k8s-runner: session ${created.sessionId}\n`);
  }

  event(_id: number, event: RunEvent): void {
    if (event.type === "progress") {
      if (event.done) this.#progress?.clear();
      else this.#progress?.update(event.phase, event.message);
      return;
    }
    if (event.type === "route") {
      // A route's changes, not its publication: whether the session's address answers.
      if (event.state !== "pending") this.streams.stderr.write(`k8s-runner: ${routeLine(event)}\n`);
      return;
    }
    if (event.type === "run" && event.phase === "started" && event.telo !== undefined && this.streams.stderr.isTTY) {
      this.#progress?.clear();
      this.streams.stderr.write(`k8s-runner: ${event.app} started on telo ${event.telo}\n`);
    }
    if (event.type !== "status") return;
    if (event.status.kind !== "starting") this.#progress?.clear();
    // An app that exited non-zero is reported `failed`; its code is the answer, not an error.
    if (event.status.kind === "failed" && appExitCode(event.status) === undefined) this.streams.stderr.write(`k8s-runner: session failed: ${event.status.message}\n`);
    if (event.status.kind === "stopped") this.streams.stderr.write("k8s-runner: session stopped\n");
  }

  output(tag: ByteStreamTag, _seq: number, bytes: Uint8Array): void {
    (tag === "stderr" ? this.streams.stderr : this.streams.stdout).write(bytes);
  }

  notice(text: string): void {
    this.streams.stderr.write(`k8s-runner: ${text}\n`);
  }

  exit(): void {
    this.#progress?.clear();
  }
}

export class JsonSink implements OutputSink {
  // One decoder per stream, so a character split across two frames is decoded whole.
  readonly #decoders = new Map<ByteStreamTag, TextDecoder>();

  constructor(readonly stdout: NodeJS.WritableStream) {}

  #line(value: object): void {
    this.stdout.write(`${JSON.stringify(value)}\n`);
  }

  session(created: { sessionId: string; streamUrl: string; createdAt: string }): void {
    this.#line({ type: "session", ...created });
  }

  event(id: number, event: RunEvent): void {
    this.#line({ type: "event", id, event });
  }

  output(tag: ByteStreamTag, seq: number, bytes: Uint8Array): void {
    let decoder = this.#decoders.get(tag);
    if (!decoder) this.#decoders.set(tag, (decoder = new TextDecoder()));
    this.#line({ type: "output", stream: tag, seq, data: decoder.decode(bytes, { stream: true }) });
  }

  notice(text: string): void {
    this.#line({ type: "notice", message: text });
  }

  exit(code: number, status: RunStatus | undefined): void {
    this.#line({ type: "exit", code, ...(status && { status }) });
  }
}
