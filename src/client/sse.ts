/** An incremental parser of `text/event-stream` (the subset the runner writes, §5). */
export type SseMessage = { id: number | undefined; event: string; data: string };

export class SseParser {
  #buffer = "";

  /** Feeds text; returns the complete messages. Comments (heartbeats) are skipped. */
  push(text: string): SseMessage[] {
    this.#buffer += text;
    const messages: SseMessage[] = [];
    let boundary: number;
    while ((boundary = this.#buffer.indexOf("\n\n")) >= 0) {
      const block = this.#buffer.slice(0, boundary);
      this.#buffer = this.#buffer.slice(boundary + 2);
      let id: number | undefined;
      let event = "message";
      const data: string[] = [];
      for (const line of block.split("\n")) {
        if (line.startsWith(":")) continue;
        const colon = line.indexOf(":");
        const field = colon < 0 ? line : line.slice(0, colon);
        const value = colon < 0 ? "" : line.slice(colon + 1).replace(/^ /, "");
        if (field === "id") id = Number(value);
        else if (field === "event") event = value;
        else if (field === "data") data.push(value);
      }
      if (data.length > 0) messages.push({ id, event, data: data.join("\n") });
    }
    return messages;
  }
}
