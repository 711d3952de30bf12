/**
 * The internal protocol between the api process and the supervisor: HTTP/2 over a Unix socket
 * (or over TCP to a peer replica, with the shared credential), one connection per api process
 * and supervisor, serving the route table's paths under `/internal` (src/contract/routes.ts)
 * as streams of that connection (docs/relay.md); a terminal is a WebSocket upgrade on a
 * connection of its own to the same listener, spliced by the api to its client. Request
 * bodies are the `/v1` bodies as the api validated them, validated again by the same schemas
 * on the supervisor's side; answers carry the exact status and JSON body the api relays to
 * its client. Both sides send their protocol version, so processes of different builds refuse
 * each other clearly.
 */

export const INTERNAL_PROTOCOL_VERSION = "4";
export const PROTOCOL_HEADER = "x-k8s-runner-internal-protocol";
/** The shared credential a peer replica's api process presents on every stream over TCP. */
export const PEER_CREDENTIAL_HEADER = "x-k8s-runner-peer-credential";

/**
 * Each stream's window: what one stalled reader can hold in flight. Large enough that an
 * event stream's burst crosses in one round trip, small enough that a thousand stalled streams
 * stay far below the connection's window, which is the largest HTTP/2 allows: the connection
 * itself never stalls on one stream's reader.
 */
export const STREAM_WINDOW_BYTES = 256 * 1024;
export const CONNECTION_WINDOW_BYTES = 2 ** 31 - 1;
/** Http2Session's credit limit (headers tables, queued data); new streams are refused past it. */
export const SESSION_MEMORY_MB = 256;
export const linkSettings = {
  initialWindowSize: STREAM_WINDOW_BYTES,
  // A batch of events crosses as one DATA frame rather than 16 KiB pieces.
  maxFrameSize: STREAM_WINDOW_BYTES,
  maxConcurrentStreams: 1_000_000,
};
/** The internal event stream's cursor: the last event id the client holds. */
export const EVENTS_AFTER_QUERY = "after";

/** A whole non-negative base-10 integer, else undefined (docs/api.md "Event stream (SSE)", "Terminal (WebSocket)"). */
export function parseCursor(raw: string | null | undefined): number | undefined {
  if (raw === null || raw === undefined || !/^\d+$/.test(raw.trim())) return undefined;
  const value = Number(raw.trim());
  return Number.isSafeInteger(value) ? value : undefined;
}
