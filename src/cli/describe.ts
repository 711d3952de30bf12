/**
 * `k8s-runner describe <id>` as text (docs/clients.md "Command-line client"): the session's
 * mode, status, Telo versions and endpoints, then its timeline as a waterfall. Pure: the
 * session document in, the text out.
 */
import type { RunnerEndpoint, RunStatus, SessionDocument, TimelineEntry } from "../contract/wire.ts";

/** The widest bar of the waterfall, in characters: the whole timeline's span. */
const BAR_WIDTH = 24;

function statusLine(status: RunStatus): string {
  if (status.kind === "exited") return `exited (code ${status.code})`;
  if (status.kind === "failed") return `failed: ${status.message}`;
  return status.kind;
}

function endpointLine(endpoint: RunnerEndpoint): string {
  const address = endpoint.url ?? `${endpoint.host || "(pod)"}:${endpoint.port}`;
  return `${endpoint.protocol}/${endpoint.port}  ${address}`;
}

function endpointsOf(status: RunStatus): string[] {
  if (status.kind !== "running") return [];
  const apps = (status.endpoints ?? []).map(endpointLine);
  return status.agent ? [...apps, `${endpointLine(status.agent)}  (agent)`] : apps;
}

/** `1.234 s` from 1 s on, `56 ms` below. */
export function millis(ms: number): string {
  return ms >= 1000 ? `${(ms / 1000).toFixed(3)} s` : `${Math.round(ms)} ms`;
}

/**
 * One line per entry: its offset from the admission, how long it took since the entry before
 * it, a bar over that stretch of the whole span, and its detail.
 */
export function waterfall(timeline: readonly TimelineEntry[]): string[] {
  const times = timeline.map((entry) => Date.parse(entry.at));
  const origin = times[0] ?? 0;
  const span = Math.max(1, (times.at(-1) ?? origin) - origin);
  const column = (ms: number) => Math.round(((ms - origin) / span) * BAR_WIDTH);
  const stageWidth = Math.max(...timeline.map((entry) => entry.stage.length));
  return timeline.map((entry, index) => {
    const previous = times[Math.max(0, index - 1)]!;
    // A stage that took no time still gets one mark, inside the span.
    const from = Math.min(column(previous), BAR_WIDTH - 1);
    const bar = index === 0 ? "" : " ".repeat(from) + "█".repeat(Math.max(1, column(times[index]!) - from));
    const took = index === 0 ? "" : millis(times[index]! - previous);
    const detail = entry.detail === undefined ? "" : `  ${entry.detail.split("\n")[0]}`;
    return `  +${millis(times[index]! - origin).padEnd(9)} ${entry.stage.padEnd(stageWidth)}  ${took.padStart(9)}  ${bar.padEnd(BAR_WIDTH)}${detail}`.trimEnd();
  });
}

export function renderDescribe(doc: SessionDocument): string {
  const teloVersions = doc.apps.filter((app) => app.telo !== undefined).map((app) => `${app.telo} (${app.name})`);
  const endpoints = endpointsOf(doc.status);
  return [
    `session    ${doc.sessionId}`,
    `mode       ${doc.mode}${doc.agent ? ` (agent ${doc.agent})` : ""}`,
    `status     ${statusLine(doc.status)}`,
    ...(teloVersions.length > 0 ? [`telo       ${teloVersions.join(", ")}`] : []),
    `apps       ${doc.apps.map((app) => `${app.name} (generation ${app.generation})`).join(", ")}`,
    `created    ${doc.createdAt}${doc.exitedAt ? `, ended ${doc.exitedAt}` : ""}`,
    ...(endpoints.length > 0 ? ["endpoints", ...endpoints.map((line) => `  ${line}`)] : []),
    "timeline",
    ...waterfall(doc.timeline),
  ].join("\n");
}
