/**
 * The session list. `/v1` has no list route on purpose (a session id is all it takes to attach
 * to a terminal, so listing them is for operators); the runner serves the list with its
 * console, at `/console/api/sessions`, when `RUNNER_CONSOLE=true`.
 */
import { fetch } from "undici";
import { RunnerError } from "../client/index.ts";
import type { SessionDocument } from "../contract/wire.ts";

export const SESSION_LIST_PATH = "/console/api/sessions";

export async function listSessions(baseUrl: string, headers: Record<string, string> = {}): Promise<SessionDocument[]> {
  const response = await fetch(`${baseUrl.replace(/\/+$/, "")}${SESSION_LIST_PATH}`, { headers });
  if (response.status === 404) {
    throw new RunnerError(404, { error: "not_found", message: "this runner does not list its sessions (start it with RUNNER_CONSOLE=true)" });
  }
  const text = await response.text();
  if (!response.ok) throw new RunnerError(response.status, { message: text });
  return (JSON.parse(text) as { sessions: SessionDocument[] }).sessions;
}
