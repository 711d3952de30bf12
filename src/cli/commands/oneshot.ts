/** The request-and-answer commands: `sessions`, `stop`, `describe`, `probe`, `capabilities`. */
import type { PullPolicy } from "../../contract/wire.ts";
import { type CliContext, print } from "../context.ts";
import { renderDescribe } from "../describe.ts";
import { listSessions } from "../list-sessions.ts";
import { renderCapabilities, renderProbe, renderSessions } from "../render.ts";

export async function sessionsCommand(context: CliContext): Promise<number> {
  const sessions = await listSessions(context.client.baseUrl);
  print(context, { sessions }, () => renderSessions(sessions));
  return 0;
}

export async function stopCommand(context: CliContext, sessionId: string): Promise<number> {
  await context.client.deleteSession(sessionId);
  print(context, { stopped: sessionId }, () => `stopped ${sessionId}`);
  return 0;
}

/** `--json` prints the session document as the runner answered it. */
export async function describeCommand(context: CliContext, sessionId: string): Promise<number> {
  const doc = await context.client.getSession(sessionId);
  print(context, doc, () => renderDescribe(doc));
  return 0;
}

/** Exit 0 only when the runner is ready for the image, so scripts can gate on it. */
export async function probeCommand(context: CliContext, image: string, pullPolicy: PullPolicy): Promise<number> {
  const report = await context.client.probe({ image, pullPolicy });
  print(context, report, () => renderProbe(report));
  return report.status === "ready" ? 0 : 1;
}

export async function capabilitiesCommand(context: CliContext): Promise<number> {
  const doc = await context.client.capabilities();
  print(context, doc, () => renderCapabilities(doc));
  return 0;
}
