/**
 * A raw HTTP/2 client of the supervisor's internal socket, for tests that speak the internal
 * protocol by hand (bad versions, bad bodies, stray frames) rather than through the api.
 */
import { type ClientHttp2Session, type ClientHttp2Stream, connect } from "node:http2";
import { connect as netConnect } from "node:net";

export type InternalAnswer = { status: number; text: string };

export class InternalH2 {
  readonly session: ClientHttp2Session;

  constructor(target: { socketPath: string } | { host: string; port: number }) {
    this.session =
      "socketPath" in target
        ? connect("http://supervisor", { createConnection: () => netConnect(target.socketPath) })
        : connect(`http://${target.host}:${target.port}`);
    this.session.on("error", () => undefined);
  }

  /** A whole request; resolves with the status and body text. */
  request(method: string, path: string, headers: Record<string, string>, body?: string): Promise<InternalAnswer> {
    return new Promise((resolve, reject) => {
      const stream = this.session.request({ ":method": method, ":path": path, ...headers }, { endStream: body === undefined });
      let status = 0;
      const chunks: Buffer[] = [];
      stream.on("response", (head) => (status = Number(head[":status"])));
      stream.on("data", (chunk: Buffer) => chunks.push(chunk));
      stream.on("end", () => resolve({ status, text: Buffer.concat(chunks).toString("utf8") }));
      stream.on("error", reject);
      if (body !== undefined) stream.end(body);
    });
  }

  /** A stream left open both ways (a terminal). */
  open(path: string, headers: Record<string, string>): ClientHttp2Stream {
    const stream = this.session.request({ ":method": "GET", ":path": path, ...headers }, { endStream: false });
    stream.on("error", () => undefined);
    return stream;
  }

  close(): Promise<void> {
    return new Promise((resolve) => this.session.close(() => resolve()));
  }
}
