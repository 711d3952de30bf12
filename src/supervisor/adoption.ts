/**
 * Takes over sessions another supervisor left running: at boot, an earlier supervisor's
 * (restart safety); with several replicas, those of the shards this replica just acquired
 * (`mine`). They keep their ids and stream URLs; their history starts anew past any old id.
 */
import type { CoreConfig } from "../config/core.ts";
import type { Backend } from "../sessions/backend-seam.ts";
import type { Registry } from "../sessions/registry.ts";
import { Session, adoptedStreamBase } from "../sessions/session.ts";
import type { SessionLauncher } from "./session-launch.ts";

export async function adoptSessions(
  backend: Backend,
  registry: Registry,
  launcher: SessionLauncher,
  config: CoreConfig,
  now: number,
  mine?: (sessionId: string) => boolean,
): Promise<number> {
  // A session this replica already serves is not adopted twice.
  const adoptable = (await backend.adoptSessions?.(mine && ((id) => mine(id) && !registry.get(id)))) ?? [];
  const firstStreamId = adoptedStreamBase(now);
  for (const { spec, resume } of adoptable) {
    const session = new Session({
      launch: spec,
      agent: spec.agent,
      replayBufferBytes: config.replayBufferBytes,
      reloadLimit: config.watch.reloadLimit,
      now: new Date(spec.createdAt),
      firstStreamId,
    });
    registry.restore(session);
    void launcher.launch(session, resume);
  }
  return adoptable.length;
}
