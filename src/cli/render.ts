/** Human renderings of the one-shot commands' answers (`--json` prints the answers as they are). */
import type { AvailabilityReport, RunStatus, SessionDocument } from "../contract/wire.ts";

function statusText(status: RunStatus): string {
  if (status.kind === "exited") return `exited (${status.code})`;
  if (status.kind === "failed") return `failed: ${status.message}`;
  return status.kind;
}

function table(rows: string[][]): string {
  const widths = rows[0]!.map((_, column) => Math.max(...rows.map((row) => row[column]!.length)));
  return rows.map((row) => row.map((cell, column) => cell.padEnd(widths[column]!)).join("  ").trimEnd()).join("\n");
}

export function renderSessions(sessions: SessionDocument[]): string {
  if (sessions.length === 0) return "no sessions";
  const rows = sessions.map((s) => [s.sessionId, s.mode, statusText(s.status), s.createdAt, s.apps.map((a) => a.name).join(",")]);
  return table([["ID", "MODE", "STATUS", "CREATED", "APPS"], ...rows]);
}

export function renderProbe(report: AvailabilityReport): string {
  if (report.status === "ready") return "ready";
  if (report.status === "needs-setup") return ["needs setup:", ...report.issues.map((i) => `  ${i.path}: ${i.message}`)].join("\n");
  return `unavailable: ${report.message}${report.remediation ? `\n  ${report.remediation}` : ""}`;
}

type Capabilities = {
  displayName?: string;
  description?: string;
  features?: Record<string, unknown>;
  config?: { schema?: { properties?: { image?: { default?: string; enum?: string[] } } } };
  apps?: Array<{ name: string; title?: string }>;
  terms?: { version: string; title: string };
};

export function renderCapabilities(doc: Capabilities): string {
  const image = doc.config?.schema?.properties?.image;
  const lines = [
    `${doc.displayName ?? "runner"}${doc.description ? `: ${doc.description}` : ""}`,
    `features: ${Object.entries(doc.features ?? {}).map(([k, v]) => `${k}=${Array.isArray(v) ? v.join("|") : String(v)}`).join(" ")}`,
    `default image: ${image?.default ?? "none"}${image?.enum ? ` (offered: ${image.enum.join(", ")})` : ""}`,
  ];
  if (doc.terms) lines.push(`terms: ${doc.terms.title} (version ${doc.terms.version}; pass --accept-terms ${doc.terms.version})`);
  if (doc.apps && doc.apps.length > 0) lines.push(`apps: ${doc.apps.map((a) => a.name).join(", ")}`);
  return lines.join("\n");
}

/** The default kernel image a capabilities document advertises, if any. */
export function defaultImage(doc: Capabilities): string | undefined {
  return doc.config?.schema?.properties?.image?.default;
}
