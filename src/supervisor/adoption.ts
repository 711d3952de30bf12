/**
 * Boot: takes over the sessions an earlier supervisor left running (restart safety). They
 * keep their ids and stream URLs; their history starts anew past any old id.
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
): Promise<number> {
  const adoptable = (await backend.adoptSessions?.()) ?? [];
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
