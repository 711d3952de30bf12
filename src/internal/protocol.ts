/**
 * The internal protocol between the api process and the supervisor: HTTP/1.1 over a Unix
 * socket. Request messages are validated by these schemas on both sides; answers carry the
 * exact status and JSON body the api relays to its client. Both sides send their protocol
 * version, so processes of different builds refuse each other clearly.
 */
import * as v from "valibot";
import {
  AppSessionBodySchema,
  CreateSessionBodySchema,
  ProbeBodySchema,
  SetAppsBodySchema,
  WorkspaceChangeSetBodySchema,
} from "../contract/requests.ts";

export const INTERNAL_PROTOCOL_VERSION = "1";
export const PROTOCOL_HEADER = "x-k8s-runner-internal-protocol";
/** The upgrade token of the terminal byte stream. */
export const IO_UPGRADE_PROTOCOL = "k8s-runner-io";

export const CreateSessionMessageSchema = v.object({
  request: CreateSessionBodySchema,
  acceptedTerms: v.optional(v.string()),
});
export type CreateSessionMessage = v.InferOutput<typeof CreateSessionMessageSchema>;

export const CreateAppSessionMessageSchema = v.object({
  request: AppSessionBodySchema,
  acceptedTerms: v.optional(v.string()),
});
export type CreateAppSessionMessage = v.InferOutput<typeof CreateAppSessionMessageSchema>;

export const ProbeMessageSchema = ProbeBodySchema;
export const SetAppsMessageSchema = SetAppsBodySchema;
export const WorkspaceApplyMessageSchema = WorkspaceChangeSetBodySchema;

/** A whole non-negative base-10 integer, else undefined (contract.md §5, §6.1). */
export function parseCursor(raw: string | null | undefined): number | undefined {
  if (raw === null || raw === undefined || !/^\d+$/.test(raw.trim())) return undefined;
  const value = Number(raw.trim());
  return Number.isSafeInteger(value) ? value : undefined;
}

export const internalPaths = {
  capabilities: "/internal/capabilities",
  probe: "/internal/probe",
  sessions: "/internal/sessions",
  appSessions: (name: string) => `/internal/apps/${encodeURIComponent(name)}/sessions`,
  session: (id: string) => `/internal/sessions/${encodeURIComponent(id)}`,
  events: (id: string) => `/internal/sessions/${encodeURIComponent(id)}/events`,
  io: (id: string) => `/internal/sessions/${encodeURIComponent(id)}/io`,
  workspace: (id: string) => `/internal/sessions/${encodeURIComponent(id)}/workspace`,
  workspaceFile: (id: string) => `/internal/sessions/${encodeURIComponent(id)}/workspace/file`,
  reload: (id: string) => `/internal/sessions/${encodeURIComponent(id)}/reload`,
  apps: (id: string) => `/internal/sessions/${encodeURIComponent(id)}/apps`,
  resume: (id: string) => `/internal/sessions/${encodeURIComponent(id)}/resume`,
  metrics: "/internal/metrics",
};
