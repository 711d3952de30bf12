/**
 * Joins a terminal's output chunks that arrive together into one chunk per run of the same
 * stream. One socket read of the attach often holds many messages (a tty's echo next to the
 * program's output, a burst of small writes), and `ws` emits them one after another in one
 * synchronous pass; every chunk handed on costs a replay entry, an internal frame and a client
 * WebSocket message in the two processes. What was added during that pass is handed on once it
 * is over (`process.nextTick`), so output never waits for a later event-loop turn; a change of
 * stream hands on what came before it, so stdout and stderr keep their order.
 */
export type OutputStream = "stdout" | "stderr";

export class OutputJoiner {
  #parts: Buffer[] = [];
  #bytes = 0;
  #stream: OutputStream = "stdout";
  #scheduled = false;

  constructor(private readonly deliver: (bytes: Buffer, stream: OutputStream) => void) {}

  add(bytes: Buffer, stream: OutputStream): void {
    if (this.#parts.length > 0 && stream !== this.#stream) this.flush();
    this.#stream = stream;
    this.#parts.push(bytes);
    this.#bytes += bytes.byteLength;
    if (this.#scheduled) return;
    this.#scheduled = true;
    process.nextTick(() => {
      this.#scheduled = false;
      this.flush();
    });
  }

  /** Hands on what is held now (also called by the tick scheduled in `add`). */
  flush(): void {
    if (this.#parts.length === 0) return;
    const bytes = this.#parts.length === 1 ? this.#parts[0]! : Buffer.concat(this.#parts, this.#bytes);
    this.#parts = [];
    this.#bytes = 0;
    this.deliver(bytes, this.#stream);
  }
}
