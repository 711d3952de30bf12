/**
 * The ceilings each owned session's stream ids stay below (docs/replicas.md "Output across a
 * handover"): set when a session is adopted, saved again on the session's pod only when its ids
 * come within half the reserve of the last saved one. One pass every few seconds over the
 * registry; a pass writes nothing for a session whose ids have not moved that far, so the
 * steady state costs no write at all.
 */
import type { Logger } from "../log.ts";
import type { Registry } from "../sessions/registry.ts";
import { type StreamIds, ceilingOf, lastIds, needsNewCeiling } from "../sessions/stream-marks.ts";
import { type Session, adoptedStreamBase } from "../sessions/session.ts";

/** How often the ids are looked at. */
export const CEILING_PERIOD_MS = 2_000;

export class StreamCeilings {
  readonly #saved = new WeakMap<Session, { ceiling: StreamIds; stored: boolean }>();
  readonly #writing = new WeakSet<Session>();

  constructor(
    readonly registry: Registry,
    readonly log: Logger,
  ) {}

  /** An adopted session's ceiling: `stored` once its pod carries it. */
  adopted(session: Session, ceiling: StreamIds, stored: boolean): void {
    this.#saved.set(session, { ceiling, stored });
  }

  /** One pass: a new ceiling for each session whose ids need one (awaited by tests; the timer ignores it). */
  async pass(): Promise<void> {
    await Promise.all(this.registry.all().map((session) => this.#check(session)));
  }

  /** Runs passes until the returned stop is called. */
  run(periodMs = CEILING_PERIOD_MS): () => void {
    const timer = setInterval(() => void this.pass(), periodMs);
    timer.unref();
    return () => clearInterval(timer);
  }

  async #check(session: Session): Promise<void> {
    const workload = session.workload;
    if (!workload?.saveCeiling || session.disposed || this.#writing.has(session)) return;
    const ids = lastIds(session);
    const saved = this.#saved.get(session) ?? { ceiling: implicitCeiling(session, ids), stored: true };
    if (saved.stored && !needsNewCeiling(ids, saved.ceiling)) return;
    const ceiling = ceilingOf(ids);
    this.#writing.add(session);
    try {
      await workload.saveCeiling(ceiling);
      this.#saved.set(session, { ceiling, stored: true });
    } catch (error) {
      this.log.warn("could not save a session's stream ceiling; retrying", { sessionId: session.id, error });
    } finally {
      this.#writing.delete(session);
    }
  }
}

/**
 * A session this replica admitted saved no ceiling: a successor finding none starts at the
 * time-derived base of its own adoption, which is above the base of this session's creation.
 */
function implicitCeiling(session: Session, ids: StreamIds): StreamIds {
  const base = adoptedStreamBase(session.createdAt.getTime()) - 1;
  return { events: base, apps: Object.fromEntries(Object.keys(ids.apps).map((name) => [name, base])) };
}
