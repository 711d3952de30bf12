/**
 * The progress display of long waits (image build, image pull): one line on a terminal's
 * stderr, redrawn in place with a spinner and the time spent. Only on a TTY: scripts read
 * `--json` or the exit code instead, and an animated line would litter their logs.
 */
import type { RunPhase } from "../contract/wire.ts";

const SPINNER = ["⠋", "⠙", "⠹", "⠸", "⠼", "⠴", "⠦", "⠧", "⠇", "⠏"];
const FRAME_MS = 100;

export type ProgressState = { phase: RunPhase; message: string; since: number };

/** The line for `state` at `now`: spinner frame, phase, message and elapsed seconds. */
export function progressLine(state: ProgressState, now: number, columns: number): string {
  const elapsed = Math.max(0, now - state.since);
  const frame = SPINNER[Math.floor(elapsed / FRAME_MS) % SPINNER.length];
  const line = `${frame} ${state.phase}: ${state.message.replace(/\s+/g, " ")} (${Math.floor(elapsed / 1000)}s)`;
  // One row only, or the in-place redraw would leave wrapped remnants behind.
  return line.length > columns - 1 ? `${line.slice(0, Math.max(0, columns - 2))}…` : line;
}

export type ProgressStream = { write(text: string): unknown; columns?: number };

export class ProgressDisplay {
  #state: ProgressState | undefined;
  #timer: NodeJS.Timeout | undefined;

  constructor(
    readonly stream: ProgressStream,
    readonly now: () => number = Date.now,
  ) {}

  update(phase: RunPhase, message: string): void {
    const since = this.#state?.phase === phase ? this.#state.since : this.now();
    this.#state = { phase, message, since };
    this.#draw();
    this.#timer ??= setInterval(() => this.#draw(), FRAME_MS);
    this.#timer.unref();
  }

  /** Erases the line and stops redrawing (before the app's output takes the terminal). */
  clear(): void {
    if (this.#timer) clearInterval(this.#timer);
    this.#timer = undefined;
    if (this.#state) this.stream.write("\r\x1b[K");
    this.#state = undefined;
  }

  #draw(): void {
    if (this.#state) this.stream.write(`\r\x1b[K${progressLine(this.#state, this.now(), this.stream.columns ?? 80)}`);
  }
}
