/**
 * The smallest proof that a runner works end to end, as a user checks it: a run session reaches
 * `running`, the terminal echoes what is typed, and a DELETE stops it.
 */
import { expect } from "vitest";
import type { RunnerClient } from "../../src/client/index.ts";
import { sessionBody } from "./session-body.ts";
import { eventsUntil, framesUntilText, isStatus, textOf } from "./streams.ts";

export async function sessionRoundTrip(client: RunnerClient, output: string): Promise<void> {
  const { sessionId } = await client.createSession(sessionBody({ simulate: { output } }));
  await eventsUntil(client, sessionId, isStatus("running"));
  const terminal = client.terminal(sessionId);
  await terminal.send("typed\r");
  expect(textOf(await framesUntilText(terminal, "typed"))).toContain("typed");
  terminal.close();
  await client.deleteSession(sessionId);
  await eventsUntil(client, sessionId, isStatus("stopped"));
}
