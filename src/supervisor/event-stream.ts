/**
 * Serves a session's SSE stream (contract.md §5) to one follower. The follower holds only a
 * cursor into the session's event history and writes while its socket accepts data; a slow
 * reader therefore costs no memory beyond the shared history, and one that falls behind the
 * oldest retained event gets a gap frame and continues from there.
 */
import type { Writable } from "node:stream";
import { SSE_GAP_FRAME, SSE_HEARTBEAT, sseEventFrame } from "../contract/streams.ts";
import { sseSubscriberOpened } from "../metrics/figures.ts";
import type { Session } from "../sessions/session.ts";

export function streamEvents(session: Session, out: Writable, afterId: number, heartbeatMs: number): void {
  let cursor = afterId;
  let finished = false;
  let awaitingDrain = false;
  const closeSubscriber = sseSubscriberOpened();
  // A stream opened on a terminal session is a replay: no heartbeat, not a subscriber.
  const live = !session.terminal;
  if (live) session.addSubscriber();

  const finish = () => {
    if (finished) return;
    finished = true;
    unsubscribe();
    clearInterval(heartbeat);
    closeSubscriber();
    if (live) session.removeSubscriber(Date.now());
    if (!out.writableEnded) out.end();
  };

  const pump = () => {
    if (finished || awaitingDrain) return;
    const events = session.events;
    if (events.hasGapAfter(cursor)) {
      out.write(SSE_GAP_FRAME);
      cursor = events.oldestId - 1;
    }
    while (cursor + 1 < events.nextId) {
      cursor += 1;
      const record = events.get(cursor);
      if (!record) continue;
      const accepted = out.write(sseEventFrame(cursor, record.type, record.json));
      if (record.terminal) return finish();
      if (!accepted) {
        awaitingDrain = true;
        out.once("drain", () => {
          awaitingDrain = false;
          pump();
        });
        return;
      }
    }
    if (session.terminal || session.disposed) finish();
  };

  const unsubscribe = session.onChange(pump);
  const heartbeat = setInterval(() => {
    if (!awaitingDrain) out.write(SSE_HEARTBEAT);
  }, heartbeatMs);
  heartbeat.unref();
  out.on("close", finish);
  out.on("error", finish);
  pump();
}
