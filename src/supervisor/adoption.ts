/**
 * Takes over sessions another supervisor left running: at boot, an earlier supervisor's
 * (restart safety); with several replicas, those of the shards this replica just acquired
 * (`mine`). They keep their ids and stream URLs. Their streams continue after the ids the last
 * owner saved on the pod (docs/replicas.md "Output across a handover"), or, with none saved,
 * start anew past any old id.
 */
import type { CoreConfig } from "../config/core.ts";
import type { AdoptableSession, Backend } from "../sessions/backend-seam.ts";
import type { Registry } from "../sessions/registry.ts";
import { Session, adoptedStreamBase } from "../sessions/session.ts";
import { type StreamIds, RESERVE, firstIdsAfter } from "../sessions/stream-marks.ts";
import type { SessionLauncher } from "./session-launch.ts";
import type { StreamCeilings } from "./stream-ceilings.ts";

export async function adoptSessions(
  backend: Backend,
  registry: Registry,
  launcher: SessionLauncher,
  config: CoreConfig,
  now: number,
  mine?: (sessionId: string) => boolean,
  ceilings?: StreamCeilings,
): Promise<number> {
  // A session this replica already serves is not adopted twice.
  const adoptable = (await backend.adoptSessions?.(mine && ((id) => mine(id) && !registry.get(id)))) ?? [];
  const floor = adoptedStreamBase(now);
  await Promise.all(
    adoptable.map(async (candidate) => {
      const { spec, resume } = candidate;
      const first = firstIdsAfter(candidate.streams, floor);
      const session = new Session({
        launch: spec,
        agent: spec.agent,
        replayBufferBytes: config.replayBufferBytes,
        reloadLimit: config.watch.reloadLimit,
        now: new Date(spec.createdAt),
        firstStreamId: first.events,
        firstSeqOf: first.app,
      });
      // Before any id is handed out: a crash of this replica must not let a third one reuse them.
      const stored = await claimStreams(candidate, session, launcher);
      ceilings?.adopted(session, ceilingFrom(session), stored);
      registry.restore(session);
      void launcher.launch(session, resume);
    }),
  );
  return adoptable.length;
}

/** The ceiling an adopted session starts under: its first ids plus the reserve. */
function ceilingFrom(session: Session): StreamIds {
  const apps: Record<string, number> = {};
  for (const [name, channel] of session.apps) apps[name] = channel.bytes.nextId - 1 + RESERVE;
  return { events: session.events.nextId - 1 + RESERVE, apps };
}

async function claimStreams(candidate: AdoptableSession, session: Session, launcher: SessionLauncher): Promise<boolean> {
  if (!candidate.claimStreams) return false;
  try {
    await candidate.claimStreams(ceilingFrom(session));
    return true;
  } catch (error) {
    launcher.logFor(session).warn("could not save the adopted session's stream ceiling; retrying", { error });
    return false;
  }
}
