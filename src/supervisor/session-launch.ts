/**
 * Starting a session's workload and turning the backend's reports into the session's events.
 * Every status goes through `emitStatus`, so a session gets at most one terminal status and
 * the registry's retention timers follow each change.
 */
import { messageOf } from "../contract/problem.ts";
import { type RunEvent, type RunStatus, isEventFrame } from "../contract/wire.ts";
import type { Logger } from "../log.ts";
import { type StartTracker, trackStart } from "../metrics/figures.ts";
import { type Backend, type BackendCallbacks, SessionStartError, type Workload } from "../sessions/backend-seam.ts";
import type { Registry } from "../sessions/registry.ts";
import type { Session } from "../sessions/session.ts";

/** Where a session's start stands: `running` is held back until the workload handle exists. */
type LaunchState = { settled: boolean; heldRunning: RunStatus | undefined };

export type StartWorkload = (callbacks: BackendCallbacks) => Promise<Workload>;

export class SessionLauncher {
  /** The launch in progress of each session, for the start figures. */
  readonly #starts = new WeakMap<Session, StartTracker>();

  constructor(
    readonly backend: Backend,
    readonly registry: Registry,
    readonly log: Logger,
  ) {}

  /**
   * Starts the session's workload in the background (through `start`, a re-adoption's resume,
   * when given); start errors end up on the stream.
   */
  async launch(session: Session, start?: StartWorkload): Promise<void> {
    // A `running` reported before the start settles is held back until the workload handle
    // is in place, so a client that sees `running` can type, and use the workspace, at once.
    const launch: LaunchState = { settled: false, heldRunning: undefined };
    this.#starts.set(session, trackStart(session.mode, Date.now));
    const callbacks = this.#callbacks(session, launch);
    try {
      const workload = await (start ? start(callbacks) : this.backend.start(session.launch, callbacks));
      session.attachWorkload(workload);
      launch.settled = true;
      if (launch.heldRunning) this.emitStatus(session, launch.heldRunning);
      // A stop (DELETE or shutdown) that arrived while starting takes effect now.
      if (session.userStopped || session.disposed) await workload.stop();
    } catch (error) {
      launch.settled = true;
      const message = error instanceof SessionStartError ? `${error.stage}: ${error.message}` : `start: ${messageOf(error)}`;
      this.logFor(session).warn("session start failed", { error });
      this.emitStatus(session, session.userStopped ? { kind: "stopped" } : { kind: "failed", message });
    }
  }

  /** Records a status: at most one terminal status per session, retention timers follow. */
  emitStatus(session: Session, status: RunStatus): void {
    if (session.disposed || session.terminal) return;
    session.append({ type: "status", status });
    this.registry.statusChanged(session, status, new Date());
    this.#starts.get(session)?.status(status.kind);
    this.logFor(session).info("session status", { status: status.kind, ...(status.kind === "exited" && { code: status.code }) });
  }

  /** Every line about a session names it. */
  logFor(session: Session): Logger {
    return this.log.child({ sessionId: session.id });
  }

  #callbacks(session: Session, launch: LaunchState): BackendCallbacks {
    const append = (event: RunEvent) => {
      if (!session.disposed) session.append(event);
    };
    return {
      onStatus: (status) => {
        if (!launch.settled && status.kind === "running") launch.heldRunning = status;
        else this.emitStatus(session, status);
      },
      onProgress: (phase, message, done, app) => {
        this.#starts.get(session)?.stage(phase);
        append({ type: "progress", ...(app !== undefined && { app }), phase, message, ...(done !== undefined && { done }) });
      },
      onOutput: (app, bytes, tag) => session.pushOutput(app, bytes, tag),
      onDebug: (app, frame) => {
        const channel = session.apps.get(app);
        if (!channel) return;
        if (isEventFrame(frame)) append({ type: "debug", app, frame });
        for (const event of channel.run.onFrame(frame, Date.now())) append(event);
      },
      onReachability: (app, port, state) => append({ type: "reachability", app, port, state }),
      onRunEnded: (app, outcome) => {
        for (const event of session.apps.get(app)?.run.onWorkloadEnded(outcome, Date.now()) ?? []) append(event);
      },
      onEndpoints: (app, change) => {
        session.applyEndpointChange(app, change);
        append({ type: "endpoints", app, ...change });
      },
      isUserStopped: () => session.userStopped,
      stopRequested: session.stopSignal,
    };
  }
}
