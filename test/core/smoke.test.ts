import { describe, expect, it } from "vitest";
import { runnerForSuite } from "../support/suite-runner.ts";
import { sessionBody } from "../support/session-body.ts";

describe("smoke", () => {
  const runner = runnerForSuite();

  it("creates a session, streams, echoes, exits", async () => {
    const created = await runner.client.createSession(sessionBody({ script: { output: "hello\r\n" } }));
    const terminal = runner.client.terminal(created.sessionId);
    const seen: string[] = [];
    await terminal.send("hi there\n!exit 3\n");
    for await (const frame of terminal.frames()) {
      if (frame.kind === "bytes") seen.push(Buffer.from(frame.payload).toString());
    }
    const events = [];
    for await (const item of runner.client.events(created.sessionId)) events.push(item);
    expect(seen.join("")).toContain("hi there");
    expect(events.at(-1)).toMatchObject({ event: { type: "status", status: { kind: "exited", code: 3 } } });
    expect(await terminal.closed).toEqual({ code: 1000, reason: "session terminal" });
  });
});
