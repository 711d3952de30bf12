/**
 * One follower of a replay ring (the session's events, or one app's bytes): a cursor into the
 * shared buffer that writes while its socket accepts data. Replay and live entries take the
 * same path, a slow reader costs no memory beyond the shared buffer, and one that falls behind
 * the oldest retained entry is told of the gap and continues from there. The socket is corked
 * while a pump writes, so the entries one change made available leave in one write rather
 * than one write (a system call, and a wake-up of the reader) per entry.
 */
import type { ReplayRing } from "../sessions/replay-ring.ts";
import type { Session } from "../sessions/session.ts";

/** After one written entry: go on, wait for the socket's `drain`, or end the follow. */
export type WriteResult = "more" | "drain" | "end";

export type RingSink<T> = {
  /** The socket written to: corked during a pump; its `drain` resumes a paused follow. */
  readonly socket: { once(event: "drain", listener: () => void): unknown; cork(): void; uncork(): void };
  write(id: number, entry: T): WriteResult;
  gap(): void;
  /** Checked before each pump: true ends the follow before anything is written. */
  stopBefore?(): boolean;
  /** Checked once caught up: true ends the follow. */
  doneWhenCaughtUp(): boolean;
  /** Called once when the follow ends. */
  end(): void;
};

export type RingFollow = {
  /** True while the socket has not drained what was written. */
  readonly paused: boolean;
  /** Ends the follow (the socket went away); idempotent. */
  stop(): void;
};

export function followRing<T>(session: Session, ring: ReplayRing<T>, afterId: number, sink: RingSink<T>): RingFollow {
  let cursor = afterId;
  let finished = false;
  let paused = false;

  const stop = () => {
    if (finished) return;
    finished = true;
    unsubscribe();
    sink.end();
  };

  /** Writes what the ring holds past the cursor; says why it stopped. */
  const writeAvailable = (): "caught up" | "drain" | "end" => {
    if (sink.stopBefore?.()) return "end";
    if (ring.hasGapAfter(cursor)) {
      sink.gap();
      cursor = ring.oldestId - 1;
    }
    while (cursor + 1 < ring.nextId) {
      cursor += 1;
      const entry = ring.get(cursor);
      if (entry === undefined) continue;
      const result = sink.write(cursor, entry);
      if (result !== "more") return result;
    }
    return sink.doneWhenCaughtUp() ? "end" : "caught up";
  };

  const pump = () => {
    if (finished || paused) return;
    sink.socket.cork();
    let outcome: ReturnType<typeof writeAvailable>;
    try {
      outcome = writeAvailable();
    } finally {
      // Before waiting for `drain` or ending: a corked socket would send nothing.
      sink.socket.uncork();
    }
    if (outcome === "end") return stop();
    if (outcome === "drain") {
      paused = true;
      sink.socket.once("drain", () => {
        paused = false;
        pump();
      });
    }
  };

  const unsubscribe = session.onChange(pump);
  pump();
  return {
    get paused() {
      return paused;
    },
    stop,
  };
}
