// The api's HTTP/2 link to a supervisor when its own event loop is stalled: a connection that
// takes longer than the connect deadline is given up, and that must be an error of the call,
// never an exception that ends the process (node's http2 announces "connect" even on a
// session destroyed while it was connecting).
import { createServer, type Http2Server } from "node:http2";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { LinkError, SupervisorLink } from "../../src/internal/link.ts";

let server: Http2Server;
let port: number;
beforeAll(async () => {
  server = createServer();
  server.on("stream", (stream) => {
    stream.respond({ ":status": 200 });
    stream.end("ok");
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  port = (server.address() as AddressInfo).port;
});
afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

/** Holds the event loop, as a process starved of CPU would. */
function stall(ms: number): void {
  const until = Date.now() + ms;
  while (Date.now() < until);
}

describe("the link to a supervisor over TCP", () => {
  it("fails the call, and nothing else, when its own process stalls past the connect deadline", async () => {
    const link = new SupervisorLink({ host: "127.0.0.1", port, credential: "c" });
    const answer = link.open({ ":path": "/" });
    stall(2_500);
    await expect(answer).rejects.toBeInstanceOf(LinkError);
    // Let the stalled connection's own events run out: an exception there would fail the run.
    await new Promise((resolve) => setTimeout(resolve, 200));
    // The next call opens a new connection and is answered.
    const again = await link.open({ ":path": "/" });
    expect(again.status).toBe(200);
    again.stream.destroy();
    await link.close();
  });
});
