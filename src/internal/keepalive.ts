/**
 * HTTP/2 PING on a link's connection (docs/relay.md "Keepalive"): a peer that stops answering
 * (its host gone, a network partition, a firewall dropping the flow) leaves TCP open for as long
 * as the kernel keeps retrying, and every event stream on it would hang. A PING every
 * `intervalMs` that is not acknowledged within `timeoutMs` destroys the connection: its streams
 * error at once (event streams are cut so clients resume) and the next request opens a new
 * connection. A spliced terminal has a TCP connection of its own, with WebSocket pings on the same
 * bounds instead (src/supervisor/terminal-upgrades.ts, src/internal/terminal-splice.ts).
 */
import type { Http2Session } from "node:http2";

export type Keepalive = { intervalMs: number; timeoutMs: number };

/**
 * Generous enough that a peer's event loop stalled by load or a long collection is not taken
 * for dead; a dead peer is still found within half a minute.
 */
export const PEER_KEEPALIVE: Keepalive = { intervalMs: 10_000, timeoutMs: 15_000 };

export class PeerUnresponsiveError extends Error {
  override name = "PeerUnresponsiveError";
}

/** Pings `session` until it closes; one PING in flight at a time. */
export function keepAlive(session: Http2Session, { intervalMs, timeoutMs }: Keepalive): void {
  let awaiting: NodeJS.Timeout | undefined;
  const dead = () => {
    if (!session.destroyed) session.destroy(new PeerUnresponsiveError(`the peer did not answer a PING within ${timeoutMs} ms`));
  };
  const ping = () => {
    if (awaiting || session.destroyed || session.closed || session.connecting) return;
    awaiting = setTimeout(dead, timeoutMs);
    awaiting.unref();
    // Called with the acknowledgement, or with an error when the session went first (its
    // own close then ends this).
    const sent = session.ping(() => {
      clearTimeout(awaiting);
      awaiting = undefined;
    });
    if (!sent) {
      clearTimeout(awaiting);
      awaiting = undefined;
    }
  };
  const timer = setInterval(ping, intervalMs);
  timer.unref();
  session.once("close", () => {
    clearInterval(timer);
    clearTimeout(awaiting);
  });
}
