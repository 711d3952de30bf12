/**
 * `attach <id>` and `logs <id>`: the session's terminal from its first retained byte until
 * the session ends. `attach` also forwards stdin and answers the app's exit code; `logs` only
 * prints.
 */
import { type CliContext, createSink } from "../context.ts";
import { EXIT_ERROR, appExitCode, exitCodeFor } from "../exit-code.ts";
import { relayTerminal } from "../terminal-io.ts";
import { CloseCodes } from "../../contract/streams.ts";

/** Resolves once a starting session runs or ends: the runner drops stdin sent before that. */
async function untilStarted(context: CliContext, sessionId: string): Promise<void> {
  for await (const item of context.client.events(sessionId)) {
    if ("event" in item && item.event.type === "status" && item.event.status.kind !== "starting") return;
  }
}

export async function attachCommand(context: CliContext, sessionId: string, app: string | undefined, interactive: boolean): Promise<number> {
  const { client } = context;
  const sink = createSink(context);
  // Unknown ids are refused here with the runner's own 404 message.
  const before = await client.getSession(sessionId);
  const closed = await relayTerminal((lastSeq) => client.terminal(sessionId, { ...(app !== undefined && { app }), lastSeq }), {
    stdin: interactive ? context.stdin : undefined,
    stdout: context.streams.stdout,
    sink,
    ...(before.status.kind === "starting" && { stdinGate: untilStarted(context, sessionId) }),
  });
  if (closed.code === CloseCodes.notFound) throw new Error(closed.reason || "session or app not found");
  const { status } = await client.getSession(sessionId);
  const ended = ["exited", "failed", "stopped"].includes(status.kind);
  if (!ended) sink.notice(`the terminal closed (${closed.code}) while the session is ${status.kind}`);
  if (status.kind === "failed" && appExitCode(status) === undefined) sink.notice(`session failed: ${status.message}`);
  const code = !ended ? EXIT_ERROR : interactive ? exitCodeFor(status, false) : 0;
  sink.exit(code, status);
  return code;
}
