/**
 * The internal protocol between the api process and the supervisor: HTTP/1.1 over a Unix
 * socket, serving the route table's paths under `/internal` (src/contract/routes.ts). Request
 * bodies are the `/v1` bodies as the api validated them, validated again by the same schemas
 * on the supervisor's side; answers carry the exact status and JSON body the api relays to
 * its client. Both sides send their protocol version, so processes of different builds refuse
 * each other clearly.
 */

export const INTERNAL_PROTOCOL_VERSION = "2";
export const PROTOCOL_HEADER = "x-k8s-runner-internal-protocol";
/** The upgrade token of the terminal byte stream. */
export const IO_UPGRADE_PROTOCOL = "k8s-runner-io";
/** The internal event stream's cursor: the last event id the client holds. */
export const EVENTS_AFTER_QUERY = "after";

/** A whole non-negative base-10 integer, else undefined (docs/api.md "Event stream (SSE)", "Terminal (WebSocket)"). */
export function parseCursor(raw: string | null | undefined): number | undefined {
  if (raw === null || raw === undefined || !/^\d+$/.test(raw.trim())) return undefined;
  const value = Number(raw.trim());
  return Number.isSafeInteger(value) ? value : undefined;
}
