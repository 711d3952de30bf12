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

export class LineDiscipline {
  private pending: number[] = [];

  constructor(private readonly sink: LineDisciplineSink) {}

  input(data: Buffer): void {
    for (const byte of data) this.byte(byte);
  }

  private byte(b: number): void {
    const s = this.sink;
    switch (b) {
      case CR:
      case LF:
        this.pending.push(LF);
        s.echo(Buffer.from("\r\n"));
        this.flush();
        return;
      case DEL:
      case BS:
        if (this.pending.length > 0) {
          this.pending.pop();
          s.echo(Buffer.from("\b \b"));
        }
        return;
      case NAK:
        s.echo(Buffer.from("\b \b".repeat(this.pending.length)));
        this.pending = [];
        return;
      case ETX:
        this.pending = [];
        s.echo(Buffer.from("^C\r\n"));
        s.signal("SIGINT");
        return;
      case FS:
        this.pending = [];
        s.echo(Buffer.from("^\\\r\n"));
        s.signal("SIGQUIT");
        return;
      case EOT:
        if (this.pending.length === 0) s.eof();
        else this.flush();
        return;
      default:
        this.pending.push(b);
        // Control characters echo in caret notation, as ECHOCTL does.
        s.echo(b < 0x20 && b !== 0x09 ? Buffer.from(`^${String.fromCharCode(b + 0x40)}`) : Buffer.from([b]));
    }
  }

  private flush(): void {
    const line = Buffer.from(this.pending);
    this.pending = [];
    this.sink.line(line);
  }
}

/** Output post-processing (ONLCR): a program's `\n` reaches the terminal as `\r\n`. */
export function onlcr(data: Buffer): Buffer {
  if (!data.includes(LF)) return data;
  const out: number[] = [];
  let prev = -1;
  for (const b of data) {
    if (b === LF && prev !== CR) out.push(CR);
    out.push(b);
    prev = b;
  }
  return Buffer.from(out);
}
