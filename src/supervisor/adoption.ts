/**
 * Takes over the sessions `mine` selects from their pods: one replica's, at boot, every session an
 * earlier supervisor left running (restart safety); among replicas, those of the shards this
 * replica just acquired. They keep their ids and stream URLs. Their streams continue after the ids the last
 * owner saved on the pod (docs/replicas.md "Output across a handover"), or, with none saved,
 * start anew past any old id.
 */
import type { CoreConfig } from "../config/core.ts";
import type { Backend } from "../sessions/backend-seam.ts";
import type { Registry } from "../sessions/registry.ts";
import { Session, adoptedStreamBase } from "../sessions/session.ts";
import { type SavedStreams, adoptionCeiling, firstIdsAfter } from "../sessions/stream-marks.ts";
import type { SessionLauncher } from "./session-launch.ts";
import type { StreamCeilings } from "./stream-ceilings.ts";

export async function adoptSessions(
  backend: Backend,
  registry: Registry,
  launcher: SessionLauncher,
  config: CoreConfig,
  now: number,
  mine: (sessionId: string) => boolean,
  ceilings?: StreamCeilings,
): Promise<number> {
  const floor = adoptedStreamBase(now);
  // The ceiling is claimed on the pod before any id is handed out: a crash of this replica must
  // not let a third one reuse them.
  const ceilingAfter = (saved: SavedStreams | undefined, apps: readonly string[]) => adoptionCeiling(firstIdsAfter(saved, floor), apps);
  // A session this replica already serves is not adopted twice.
  const adoptable = (await backend.adoptSessions?.(ceilingAfter, (id) => mine(id) && !registry.get(id))) ?? [];
  for (const { spec, resume, streams, claimed } of adoptable) {
    const first = firstIdsAfter(streams, floor);
    const session = new Session({
      launch: spec,
      agent: spec.agent,
      replayBufferBytes: config.replayBufferBytes,
      reloadLimit: config.watch.reloadLimit,
      now: new Date(spec.createdAt),
      firstStreamId: first.events,
      firstSeqOf: first.app,
    });
    ceilings?.adopted(session, ceilingAfter(streams, [...session.apps.keys()]), claimed);
    registry.restore(session);
    void launcher.launch(session, resume);
  }
  return adoptable.length;
}
