/**
 * The one incremental `text/event-stream` parser (WHATWG HTML §9.2): lines end with CRLF, LF or
 * CR (also when a chunk splits a CRLF), `:` lines are comments, a blank line dispatches the
 * event, an event without data is not dispatched. Neither a line nor an event's data is held
 * beyond `maxEventChars`: such an event is dropped (and counted), so a peer that never ends a
 * line, or an event, cannot grow the reader without bound.
 */
export type SseMessage = { id: string | undefined; event: string; data: string };

export type SseParserOptions = {
  /** Longest line, and longest data of one event, kept (default 16 MiB of characters). */
  maxEventChars?: number;
  /**
   * How a field's value starts: `standard` drops one space after the colon; `trimStart` drops
   * all leading whitespace (what the reference's debug relay did).
   */
  valueStart?: "standard" | "trimStart";
};

export const DEFAULT_MAX_SSE_EVENT_CHARS = 16 * 1024 * 1024;

const LINE_END = /\r\n|\r|\n/g;

export class SseParser {
  readonly #maxChars: number;
  readonly #trimStart: boolean;
  #line = "";
  /** The current line went over the bound: the rest of it, and its event, are dropped. */
  #lineTooLong = false;
  /** A chunk ended in `\r`: a `\n` opening the next one belongs to the same line end. */
  #afterCr = false;
  #event: { id: string | undefined; event: string; data: string[]; chars: number; dropped: boolean } = SseParser.#fresh();
  /** Events dropped because a line was over the bound. */
  dropped = 0;

  constructor(options: SseParserOptions = {}) {
    this.#maxChars = options.maxEventChars ?? DEFAULT_MAX_SSE_EVENT_CHARS;
    this.#trimStart = options.valueStart === "trimStart";
  }

  static #fresh() {
    return { id: undefined, event: "message", data: [] as string[], chars: 0, dropped: false };
  }

  /** Feeds text; returns the events it completed. */
  push(text: string): SseMessage[] {
    const messages: SseMessage[] = [];
    let start = this.#afterCr && text.startsWith("\n") ? 1 : 0;
    this.#afterCr = false;
    LINE_END.lastIndex = start;
    for (let match = LINE_END.exec(text); match; match = LINE_END.exec(text)) {
      this.#append(text.slice(start, match.index));
      const message = this.#endLine();
      if (message) messages.push(message);
      start = match.index + match[0].length;
      if (match[0] === "\r" && start === text.length) this.#afterCr = true;
    }
    this.#append(text.slice(start));
    return messages;
  }

  #append(piece: string): void {
    if (this.#lineTooLong) return;
    if (this.#line.length + piece.length > this.#maxChars) {
      this.#lineTooLong = true;
      this.#line = "";
      return;
    }
    this.#line += piece;
  }

  #endLine(): SseMessage | undefined {
    const line = this.#line;
    const tooLong = this.#lineTooLong;
    this.#line = "";
    this.#lineTooLong = false;
    if (tooLong) {
      this.#event.dropped = true;
      this.#event.data = [];
      return undefined;
    }
    if (line === "") return this.#dispatch();
    if (line.startsWith(":")) return undefined;
    const colon = line.indexOf(":");
    const field = colon < 0 ? line : line.slice(0, colon);
    const raw = colon < 0 ? "" : line.slice(colon + 1);
    const value = this.#trimStart ? raw.trimStart() : raw.startsWith(" ") ? raw.slice(1) : raw;
    if (field === "data") this.#addData(value);
    else if (field === "event") this.#event.event = value;
    else if (field === "id" && !value.includes("\0")) this.#event.id = value;
    return undefined;
  }

  #addData(value: string): void {
    const event = this.#event;
    if (event.dropped) return;
    event.chars += value.length + 1;
    if (event.chars > this.#maxChars) {
      event.dropped = true;
      event.data = [];
      return;
    }
    event.data.push(value);
  }

  #dispatch(): SseMessage | undefined {
    const event = this.#event;
    this.#event = SseParser.#fresh();
    if (event.dropped) {
      this.dropped += 1;
      return undefined;
    }
    if (event.data.length === 0) return undefined;
    return { id: event.id, event: event.event, data: event.data.join("\n") };
  }
}
