// A container's log as the kubelet keeps it: timestamped chunks per stream, bounded by bytes
// (oldest dropped), readable with tail/since/limit and followable until the container ends.
export interface LogEntry {
  time: Date;
  stream: "stdout" | "stderr";
  data: Buffer;
}

/** Dropped entries kept before compacting (small buffers never bother). */
const COMPACT_AFTER = 1024;

export class LogBuffer {
  /** Retained entries are `entries[head..]`: dropping the oldest moves `head` instead of shifting the array. */
  private entries: LogEntry[] = [];
  private head = 0;
  private bytes = 0;
  private readonly followers = new Set<(e: LogEntry | null) => void>();
  private ended = false;

  constructor(private readonly maxBytes: number) {}

  append(stream: "stdout" | "stderr", data: Buffer): void {
    if (data.length === 0) return;
    const e: LogEntry = { time: new Date(), stream, data };
    this.entries.push(e);
    this.bytes += data.length;
    while (this.bytes > this.maxBytes && this.entries.length - this.head > 1) this.bytes -= this.entries[this.head++]!.data.length;
    // A shift per dropped entry made a full buffer of 1-byte frames quadratic; compacting once
    // the dropped prefix outweighs the rest copies each entry a bounded number of times.
    if (this.head > COMPACT_AFTER && this.head * 2 > this.entries.length) {
      this.entries = this.entries.slice(this.head);
      this.head = 0;
    }
    for (const f of this.followers) f(e);
  }

  /** No more output (the container terminated): followers are told with `null`. */
  end(): void {
    if (this.ended) return;
    this.ended = true;
    for (const f of this.followers) f(null);
    this.followers.clear();
  }

  get isEnded(): boolean {
    return this.ended;
  }

  snapshot(): LogEntry[] {
    return this.entries.slice(this.head);
  }

  follow(fn: (e: LogEntry | null) => void): () => void {
    if (this.ended) {
      fn(null);
      return () => {};
    }
    this.followers.add(fn);
    return () => this.followers.delete(fn);
  }
}
