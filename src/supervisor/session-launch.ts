/**
 * Starting a session's workload and turning the backend's reports into the session's events.
 * Every status goes through `emitStatus`, so a session gets at most one terminal status and
 * the registry's retention timers follow each change.
 */
import { messageOf } from "../contract/problem.ts";
import { type RunEvent, type RunStatus, type TimelineEntry, isEventFrame } from "../contract/wire.ts";
import type { Logger } from "../log.ts";
import { type StartTracker, trackStart } from "../metrics/figures.ts";
import { type Span, failSpan, startLongSpan } from "../observability/tracing.ts";
import { type Backend, type BackendCallbacks, type BackendEvent, SessionStartError, type Started } from "../sessions/backend-seam.ts";
import type { Registry } from "../sessions/registry.ts";
import type { Session } from "../sessions/session.ts";
import { frameTime, runEndEntry, startFailureReason } from "../sessions/timeline.ts";
import { addedWithToken, statusWithToken } from "../sessions/workload-token.ts";

export type StartWorkload = (callbacks: BackendCallbacks) => Promise<Started>;

export class SessionLauncher {
  /** The launch in progress of each session, for the start figures. */
  readonly #starts = new WeakMap<Session, StartTracker>();
  /** The starts not yet settled (neither running nor failed). */
  readonly #unsettled = new Map<Session, Promise<void>>();
  /** Sessions taken over from a pod an earlier supervisor started: their `running` is this one's. */
  readonly #adopted = new WeakSet<Session>();
  /** Sessions whose first output has been seen (the kernel runs, when no debug stream says so). */
  readonly #spoke = new WeakSet<Session>();
  /** The span of each start in progress (docs/tracing.md): the timeline's stages are its events. */
  readonly #spans = new WeakMap<Session, Span>();

  constructor(
    readonly backend: Backend,
    readonly registry: Registry,
    readonly log: Logger,
  ) {}

  /**
   * Starts the session's workload in the background (through `start`, a re-adoption's resume,
   * when given); start errors end up on the stream.
   */
  launch(session: Session, start?: StartWorkload): Promise<void> {
    // One span from the admission (or the takeover) to the start settled, though the request
    // that asked for it was answered at once: its Kubernetes calls, and the pod's stages as
    // events, are the start's, under the request's trace.
    const attributes = { "k8s_runner.session_id": session.id, "k8s_runner.mode": session.mode, "k8s_runner.adopted": start !== undefined };
    const launching = startLongSpan("session.start", attributes, (span) => {
      this.#spans.set(session, span);
      return this.#launch(session, start);
    }).finally(() => {
      this.#spans.get(session)?.end();
      this.#spans.delete(session);
      this.#unsettled.delete(session);
    });
    this.#unsettled.set(session, launching);
    return launching;
  }

  /** Resolves once the session's start has settled: its workload in place, or its start failed. */
  settled(session: Session): Promise<void> {
    return this.#unsettled.get(session) ?? Promise.resolve();
  }

  async #launch(session: Session, start?: StartWorkload): Promise<void> {
    this.#starts.set(session, trackStart(session.mode, Date.now));
    if (start) this.#adopted.add(session);
    const callbacks: BackendCallbacks = {
      emit: (event) => this.#record(session, event),
      isUserStopped: () => session.userStopped,
      stopRequested: session.stopSignal,
    };
    try {
      const { workload, running } = await (start ? start(callbacks) : this.backend.start(session.launch, callbacks));
      // `running` follows the workload handle, so a client that sees it can type, and use the
      // workspace, at once.
      session.attachWorkload(workload);
      // Handed to another replica while starting: its pod is the new owner's now.
      if (session.moved) return workload.release?.();
      if (running) this.emitStatus(session, running);
      // A stop (DELETE or shutdown) that arrived while starting takes effect now.
      if (session.userStopped || session.disposed) await workload.stop();
    } catch (error) {
      const message = error instanceof SessionStartError ? `${error.stage}: ${error.message}` : `start: ${messageOf(error)}`;
      this.logFor(session).warn("session start failed", { error });
      const createRefused = error instanceof SessionStartError && error.stage === "create";
      this.emitStatus(session, session.userStopped ? { kind: "stopped" } : { kind: "failed", message }, createRefused);
    }
  }

  /**
   * Records a status: at most one terminal status per session, retention timers follow. A
   * `running` status's endpoints get the session's workload token here, whoever reported them.
   * `createRefused`: the start failed because the cluster refused to create its pod.
   */
  emitStatus(session: Session, status: RunStatus, createRefused = false): void {
    if (session.disposed || session.terminal) return;
    session.append({ type: "status", status: statusWithToken(status, session.launch.token) });
    const at = new Date().toISOString();
    if (status.kind === "running") this.#stage(session, { stage: "running", at, ...(this.#adopted.has(session) && { detail: "as a restarted supervisor took the pod over" }) });
    if (status.kind === "failed") {
      this.#stage(session, { stage: "failed", at, detail: status.message.slice(0, 500) });
      const span = this.#spans.get(session);
      if (span) failSpan(span, new Error(status.message));
    }
    // With a debug stream the run's own end is on the timeline already (a `run` event).
    if (status.kind === "exited" && !hasDebugStream(session)) this.#stage(session, { stage: "completed", at, detail: `the app exited with code ${status.code}` });
    this.registry.statusChanged(session, status, new Date());
    this.#starts.get(session)?.status(status.kind, ({ building }) => startFailureReason(session.timeline, { building, createRefused }));
    this.logFor(session).info("session status", { status: status.kind, ...(status.kind === "exited" && { code: status.code }) });
  }

  /** A stage on the session's timeline, and on its start's span while the start is in progress. */
  #stage(session: Session, entry: TimelineEntry): void {
    session.record(entry);
    const span = this.#spans.get(session);
    if (span?.isRecording()) span.addEvent(entry.stage, entry.detail === undefined ? {} : { detail: entry.detail }, new Date(entry.at));
  }

  /** Every line about a session names it. */
  logFor(session: Session): Logger {
    return this.log.child({ sessionId: session.id });
  }

  /**
   * Without a debug stream (a run session without `inspect`) the kernel says nothing of its
   * start: its first output is the first sign it runs. With one, `Kernel.Started` says it.
   */
  #firstOutput(session: Session): void {
    if (this.#spoke.has(session)) return;
    this.#spoke.add(session);
    if (!hasDebugStream(session)) this.#stage(session, { stage: "kernel-running", at: new Date().toISOString(), detail: "first output" });
  }

  /** One backend event into the session: most are recorded as they are. */
  #record(session: Session, event: BackendEvent): void {
    if (session.disposed) return;
    const append = (recorded: RunEvent): void => {
      session.append(recorded);
      const end = runEndEntry(recorded, new Date());
      if (end) this.#stage(session, end);
    };
    switch (event.type) {
      case "status":
        return this.emitStatus(session, event.status);
      case "output":
        this.#firstOutput(session);
        return session.pushOutput(event.app, event.bytes, event.tag);
      case "stage": {
        const { type: _type, ...entry } = event;
        return this.#stage(session, entry);
      }
      case "debug": {
        const channel = session.apps.get(event.app);
        if (!channel) return;
        if (event.frame.event === "Kernel.Started") this.#stage(session, { stage: "kernel-running", at: frameTime(event.frame.timestamp, new Date()), detail: "Kernel.Started" });
        if (isEventFrame(event.frame)) append(event);
        for (const run of channel.run.onFrame(event.frame, Date.now())) append(run);
        return;
      }
      case "runEnded":
        for (const run of session.apps.get(event.app)?.run.onWorkloadEnded(event.outcome, Date.now()) ?? []) append(run);
        return;
      case "endpoints": {
        session.applyEndpointChange(event.app, event);
        const added = addedWithToken(event.added, session.launch.token);
        return append({ ...event, ...(added && { added }) });
      }
      case "progress":
        this.#starts.get(session)?.stage(event.phase);
        return append(event);
      default:
        return append(event);
    }
  }
}

/** Watch sessions always have a kernel debug stream, run sessions with `inspect`. */
function hasDebugStream(session: Session): boolean {
  return session.mode === "watch" || session.launch.inspect;
}
