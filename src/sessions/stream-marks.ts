/**
 * Stream ids across owners (docs/replicas.md "Output across a handover"): the SSE event id and
 * each app's byte seq a session has handed out, as its owner saves them on its pod, and the first
 * ids a successor hands out from them. Pure; the backend stores and reads the marks.
 */
import * as v from "valibot";
import type { Session } from "./session.ts";

const Id = v.pipe(v.number(), v.integer(), v.minValue(0), v.maxValue(2 ** 32 - 1));

/** The last event id and, per app, the last byte seq handed out (0: none yet). */
export const StreamIdsSchema = v.object({ events: Id, apps: v.record(v.string(), Id) });
export type StreamIds = v.InferOutput<typeof StreamIdsSchema>;

/**
 * What a successor finds. `exact`: saved by a graceful handover after the last id was handed out
 * (the ids are the last ones). Otherwise a ceiling: the owner never hands out an id above it, so
 * a crashed owner's ids all lie below. `continues`: the apps whose output the successor can
 * continue exactly where the handover left it (their log position was found).
 */
export type SavedStreams = { exact: boolean; ids: StreamIds; continues: ReadonlySet<string> };

/**
 * How far past the ids of its last save an owner may go before it saves a new ceiling: 2^20
 * ids (a chunk carries at least one byte; output is merged per event-loop turn), and a new
 * ceiling is saved once half of it is used. 4,000 crashes of one session's owners fit in a seq.
 */
export const RESERVE = 1 << 20;

/** The ids a session has handed out so far. */
export function lastIds(session: Session): StreamIds {
  const apps: Record<string, number> = {};
  for (const [name, channel] of session.apps) apps[name] = channel.bytes.nextId - 1;
  return { events: session.events.nextId - 1, apps };
}

/** The ceiling an owner saves while it runs: `ids` plus the reserve. */
export function ceilingOf(ids: StreamIds): StreamIds {
  const apps: Record<string, number> = {};
  for (const [name, id] of Object.entries(ids.apps)) apps[name] = id + RESERVE;
  return { events: ids.events + RESERVE, apps };
}

/** True when some id is past half the reserve below the saved ceiling (or has none): save a new one. */
export function needsNewCeiling(ids: StreamIds, ceiling: StreamIds): boolean {
  const near = (id: number, limit: number | undefined) => limit === undefined || id > limit - RESERVE / 2;
  return near(ids.events, ceiling.events) || Object.entries(ids.apps).some(([name, id]) => near(id, ceiling.apps[name]));
}

/** The first event id and, per app, the first byte seq an adopting owner hands out. */
export type FirstIds = { events: number; app(name: string): number };

/**
 * The ceiling an adopting owner claims on the pod before it hands out any id: its first ids
 * plus the reserve, for the events and for each of the session's apps.
 */
export function adoptionCeiling(first: FirstIds, apps: readonly string[]): StreamIds {
  return { events: first.events - 1 + RESERVE, apps: Object.fromEntries(apps.map((name) => [name, first.app(name) - 1 + RESERVE])) };
}

/**
 * The first ids a successor hands out, given what the last owner saved and `floor` (the
 * time-derived base a session adopted without marks starts at, see adoptedStreamBase).
 * After an exact handover: the next id, so a client holding the last one continues without a
 * gap; for an app whose output cannot be continued, one more, so that client is told of a
 * `gap`. After a crash (a ceiling): past the ceiling and the floor, so no id is ever reused.
 */
export function firstIdsAfter(saved: SavedStreams | undefined, floor: number): FirstIds {
  if (!saved) return { events: floor, app: () => floor };
  if (!saved.exact) {
    return { events: Math.max(saved.ids.events + 1, floor), app: (name) => Math.max((saved.ids.apps[name] ?? 0) + 1, floor) };
  }
  return {
    events: saved.ids.events + 1,
    app: (name) => {
      const seq = saved.ids.apps[name];
      if (seq === undefined) return floor;
      return seq + (saved.continues.has(name) ? 1 : 2);
    },
  };
}
