/**
 * The watch-session supervisor (docs/api.md "Watch sessions"): on every tick, a running watch session
 * nobody has watched for the idle time is suspended (snapshot, then its workload goes), and
 * the others get their workspace checkpoint refreshed. One job per session at a time.
 */
import type { CoreConfig } from "../config/core.ts";
import type { Logger } from "../log.ts";
import type { Registry } from "../sessions/registry.ts";
import type { Session } from "../sessions/session.ts";
import type { SessionLauncher } from "./session-launch.ts";

export class WatchSupervisor {
  readonly #jobs = new Set<string>();
  #timer: NodeJS.Timeout | undefined;

  constructor(
    readonly watch: CoreConfig["watch"],
    readonly registry: Registry,
    readonly launcher: SessionLauncher,
    readonly log: Logger,
  ) {}

  start(tickMs: number): void {
    this.#timer = setInterval(() => void this.tick(Date.now()), tickMs);
    this.#timer.unref();
  }

  stop(): void {
    if (this.#timer) clearInterval(this.#timer);
  }

  /** One tick: suspend idle sessions, refresh checkpoints. */
  async tick(now: number): Promise<void> {
    const jobs: Promise<void>[] = [];
    for (const session of this.registry.all()) {
      if (session.mode !== "watch" || session.status.kind !== "running" || this.#jobs.has(session.id)) continue;
      const idle = session.subscribers === 0 && session.idleSince !== null && now - session.idleSince >= this.watch.idleMs;
      const checkpointDue = !session.checkpoint || now - session.checkpoint.at >= this.watch.checkpointMs;
      if (!idle && !checkpointDue) continue;
      this.#jobs.add(session.id);
      const job = (idle ? this.#suspend(session) : this.#checkpoint(session)).finally(() => this.#jobs.delete(session.id));
      jobs.push(job);
    }
    await Promise.all(jobs);
  }

  async #checkpoint(session: Session): Promise<void> {
    const workspace = session.workload?.workspace;
    if (!workspace) return;
    try {
      const snapshot = await workspace.snapshot();
      session.recordCheckpoint(snapshot.files, Date.now());
    } catch (error) {
      this.log.warn("workspace checkpoint failed", { sessionId: session.id, error });
    }
  }

  async #suspend(session: Session): Promise<void> {
    const workload = session.workload;
    if (!workload?.workspace || !workload.suspend) return;
    try {
      // Snapshot first: a failed snapshot aborts the suspend and the session stays up.
      const snapshot = await workload.workspace.snapshot();
      session.recordCheckpoint(snapshot.files, Date.now());
      await workload.suspend();
    } catch (error) {
      this.log.warn("watch session suspend failed; retrying next tick", { sessionId: session.id, error });
      return;
    }
    session.detachWorkload();
    this.launcher.emitStatus(session, { kind: "suspended" });
  }
}
