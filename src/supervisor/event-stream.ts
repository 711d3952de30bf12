/**
 * Serves a session's SSE stream (docs/api.md "Event stream (SSE)") to one follower of its event history (see
 * ring-follower.ts): event frames by id, a gap frame when the follower fell behind, the end
 * after the terminal status, and heartbeats while the stream is quiet. Fenced by the session's
 * hold: once `holds()` answers no, the stream ends before anything else is written, and the
 * client reconnects with its `Last-Event-ID` to the new owner.
 */
import type { Writable } from "node:stream";
import { SSE_GAP_FRAME, SSE_HEARTBEAT, sseEventFrame } from "../contract/streams.ts";
import { sseSubscriberOpened } from "../metrics/figures.ts";
import type { Session } from "../sessions/session.ts";
import { followRing } from "./ring-follower.ts";

export function streamEvents(session: Session, out: Writable, afterId: number, heartbeatMs: number, holds: () => boolean): void {
  // A stream opened on a terminal session is a replay: no heartbeat, not a subscriber.
  const live = !session.terminal;
  if (live) session.addSubscriber();
  const closeSubscriber = sseSubscriberOpened();
  const heartbeat = setInterval(() => {
    if (!follow.paused) out.write(SSE_HEARTBEAT);
  }, heartbeatMs);
  heartbeat.unref();

  const follow = followRing(session, session.events, afterId, {
    socket: out,
    write: (id, record) => {
      const accepted = out.write(sseEventFrame(id, record.type, record.json));
      if (record.terminal) return "end";
      return accepted ? "more" : "drain";
    },
    gap: () => out.write(SSE_GAP_FRAME),
    stopBefore: () => !holds(),
    doneWhenCaughtUp: () => session.terminal || session.disposed,
    end: () => {
      clearInterval(heartbeat);
      closeSubscriber();
      if (live) session.removeSubscriber(Date.now());
      if (!out.writableEnded) out.end();
    },
  });
  out.on("close", follow.stop);
  out.on("error", follow.stop);
}
