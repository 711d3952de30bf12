// A container's log as the kubelet keeps it: timestamped chunks per stream, bounded by bytes
// (oldest dropped), readable with tail/since/limit and followable until the container ends.
export interface LogEntry {
  time: Date;
  stream: "stdout" | "stderr";
  data: Buffer;
}

export class LogBuffer {
  private entries: LogEntry[] = [];
  private bytes = 0;
  private readonly followers = new Set<(e: LogEntry | null) => void>();
  private ended = false;

  constructor(private readonly maxBytes: number) {}

  append(stream: "stdout" | "stderr", data: Buffer): void {
    if (data.length === 0) return;
    const e: LogEntry = { time: new Date(), stream, data };
    this.entries.push(e);
    this.bytes += data.length;
    while (this.bytes > this.maxBytes && this.entries.length > 1) this.bytes -= this.entries.shift()!.data.length;
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
    return [...this.entries];
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
