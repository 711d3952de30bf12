// A canonical-mode line discipline (ICANON, ECHO, ICRNL, ONLCR, ISIG), so a tty container echoes
// keystrokes, edits with backspace and hands whole lines to its program as a real pty does.
const CR = 0x0d;
const LF = 0x0a;
const DEL = 0x7f;
const BS = 0x08;
const ETX = 0x03; // ^C
const EOT = 0x04; // ^D
const NAK = 0x15; // ^U
const FS = 0x1c; // ^\

export interface LineDisciplineSink {
  /** Bytes the terminal shows (echo). */
  echo(bytes: Buffer): void;
  /** A completed line (with its newline), or the pending bytes on ^D. */
  line(bytes: Buffer): void;
  signal(name: "SIGINT" | "SIGQUIT"): void;
  eof(): void;
}

/**
 * Linear in its input: the echo of one `input()` call leaves as one chunk (a byte-per-chunk echo
 * made a megabyte of stdin a million log entries and frames), and the line grows in place.
 */
export class LineDiscipline {
  private pending = Buffer.alloc(256);
  private pendingLength = 0;
  private echoed: Buffer[] = [];

  constructor(private readonly sink: LineDisciplineSink) {}

  input(data: Buffer): void {
    // Plain bytes are taken a run at a time; control bytes one by one.
    let run = 0;
    for (let i = 0; i < data.length; i++) {
      const b = data[i]!;
      if (b >= 0x20 && b !== DEL) continue;
      this.text(data.subarray(run, i));
      this.control(b);
      run = i + 1;
    }
    this.text(data.subarray(run));
    this.flushEcho();
  }

  private text(bytes: Buffer): void {
    if (bytes.length === 0) return;
    this.append(bytes);
    this.echoed.push(bytes);
  }

  private append(bytes: Buffer): void {
    if (this.pendingLength + bytes.length > this.pending.length) {
      const grown = Buffer.alloc(Math.max(this.pending.length * 2, this.pendingLength + bytes.length));
      this.pending.copy(grown, 0, 0, this.pendingLength);
      this.pending = grown;
    }
    bytes.copy(this.pending, this.pendingLength);
    this.pendingLength += bytes.length;
  }

  private control(b: number): void {
    switch (b) {
      case CR:
      case LF:
        this.append(Buffer.of(LF));
        this.echoed.push(Buffer.from("\r\n"));
        this.flushLine();
        return;
      case DEL:
      case BS:
        if (this.pendingLength > 0) {
          this.pendingLength -= 1;
          this.echoed.push(Buffer.from("\b \b"));
        }
        return;
      case NAK:
        this.echoed.push(Buffer.from("\b \b".repeat(this.pendingLength)));
        this.pendingLength = 0;
        return;
      case ETX:
        this.interrupt("^C", "SIGINT");
        return;
      case FS:
        this.interrupt("^\\", "SIGQUIT");
        return;
      case EOT:
        if (this.pendingLength === 0) {
          this.flushEcho();
          this.sink.eof();
        } else this.flushLine();
        return;
      default:
        this.append(Buffer.of(b));
        // Control characters echo in caret notation, as ECHOCTL does.
        this.echoed.push(b !== 0x09 ? Buffer.from(`^${String.fromCharCode(b + 0x40)}`) : Buffer.of(b));
    }
  }

  /** ^C and ^\ in canonical mode: the pending line is dropped, the key echoed, the signal sent. */
  private interrupt(echo: string, signal: "SIGINT" | "SIGQUIT"): void {
    this.pendingLength = 0;
    this.echoed.push(Buffer.from(`${echo}\r\n`));
    this.flushEcho();
    this.sink.signal(signal);
  }

  /** The echo written so far goes out before what the program does with the line. */
  private flushEcho(): void {
    if (this.echoed.length === 0) return;
    const bytes = Buffer.concat(this.echoed);
    this.echoed = [];
    if (bytes.length > 0) this.sink.echo(bytes);
  }

  private flushLine(): void {
    this.flushEcho();
    const line = Buffer.from(this.pending.subarray(0, this.pendingLength));
    this.pendingLength = 0;
    this.sink.line(line);
  }
}

/**
 * Output post-processing (ONLCR): every `\n` a program writes reaches the terminal as `\r\n`,
 * one it ends with `\r\n` itself included (as `\r\r\n`), as Linux's n_tty does.
 */
export function onlcr(data: Buffer): Buffer {
  if (!data.includes(LF)) return data;
  const out: number[] = [];
  for (const b of data) {
    if (b === LF) out.push(CR);
    out.push(b);
  }
  return Buffer.from(out);
}

/** `data` with every CR that directly precedes an LF removed (a terminal's line ends as a log stores them). */
export function withoutLineEndCr(data: Buffer): Buffer {
  if (!data.includes(LF)) return data;
  const out: number[] = [];
  for (let i = 0; i < data.length; i++) {
    if (data[i] === CR && data[i + 1] === LF) continue;
    out.push(data[i]!);
  }
  return Buffer.from(out);
}
