/**
 * The core of the supervisor: admits sessions, drives their workloads through the backend,
 * turns backend reports into events, and runs the watch-session supervisor (idle suspend and
 * checkpoints, contract.md §8.5). Every public method answers with the HTTP outcome the api
 * process relays to its client.
 */
import type { CoreConfig } from "../config/core.ts";
import { coResidentAgentNames } from "../config/apps-catalog.ts";
import { capabilitiesDocument, sessionConfigSchema } from "../contract/capabilities.ts";
import { newSessionId } from "../contract/ids.ts";
import { invalidPathMessage, normaliseRelativePath } from "../contract/paths.ts";
import { publicFailure } from "../contract/public-error.ts";
import type {
  AppSessionBody,
  CreateSessionBody,
  SetAppsBody,
  WorkspaceChangeSetBody,
} from "../contract/requests.ts";
import { internalError } from "../contract/validation.ts";
import { type ProbeConfig, type RunEvent, type RunStatus, isEventFrame } from "../contract/wire.ts";
import type { Logger } from "../log.ts";
import {
  type AdmissionContext,
  type SessionPlan,
  isRefusal,
  planAppSession,
  planSession,
  resolveApps,
} from "../sessions/admission.ts";
import {
  type Backend,
  type BackendCallbacks,
  SessionStartError,
  type StartSpec,
  type Workload,
} from "../sessions/backend.ts";
import { Registry } from "../sessions/registry.ts";
import { Session, adoptedStreamBase } from "../sessions/session.ts";

export type Outcome = { status: number; body?: unknown };

/** Where a session's start stands: `running` is held back until the workload handle exists. */
type LaunchState = { settled: boolean; heldRunning: RunStatus | undefined };

export type SupervisorTimings = {
  /** SSE heartbeat cadence (contract.md §5). */
  heartbeatMs: number;
  /** Watch supervisor tick (contract.md §8.5). */
  watchTickMs: number;
  /** Resize coalescing window (contract.md §6.3). */
  resizeThrottleMs: number;
};

export const DEFAULT_TIMINGS: SupervisorTimings = { heartbeatMs: 20_000, watchTickMs: 5_000, resizeThrottleMs: 50 };

const notFound = (id: string): Outcome => ({
  status: 404,
  body: { error: "not_found", message: `session '${id}' not in registry` },
});
const notAWatchSession: Outcome = {
  status: 409,
  body: { error: "not_a_watch_session", message: "this surface exists only on a watch session" },
};
const noLiveWorkspace: Outcome = {
  status: 409,
  body: { error: "not_running", message: "session has no live workspace" },
};
const noLiveWorkload: Outcome = {
  status: 409,
  body: { error: "not_running", message: "session has no live workload" },
};
const workspaceFailure = (error: unknown): Outcome => ({
  status: 500,
  body: internalError(publicFailure("the workspace request", error)),
});

export class SessionService {
  readonly registry: Registry;
  readonly #watchJobs = new Set<string>();
  #watchTimer: NodeJS.Timeout | undefined;
  #shuttingDown = false;

  constructor(
    readonly config: CoreConfig,
    readonly backend: Backend,
    readonly log: Logger,
    readonly timings: SupervisorTimings = DEFAULT_TIMINGS,
  ) {
    this.registry = new Registry({
      maxSessions: config.maxSessions,
      exitTtlMs: config.exitTtlMs,
      suspendedTtlMs: config.watch.suspendedTtlMs,
    });
  }

  startWatchSupervisor(): void {
    this.#watchTimer = setInterval(() => void this.superviseWatchSessions(Date.now()), this.timings.watchTickMs);
    this.#watchTimer.unref();
  }

  capabilities(): Outcome {
    const backend = this.backend.describe();
    return {
      status: 200,
      body: capabilitiesDocument({
        displayName: backend.displayName,
        description: backend.description,
        configSchema: sessionConfigSchema(backend.config),
        io: backend.io,
        ports: backend.ports,
        watch: this.config.watch.enabled,
        agents: coResidentAgentNames(this.config.apps),
        terms: this.config.terms,
        apps: [...this.config.apps.values()],
      }),
    };
  }

  async probe(config: ProbeConfig): Promise<Outcome> {
    try {
      return { status: 200, body: await this.backend.probe(config) };
    } catch (error) {
      // An unavailable backend is a report, never a 5xx (contract.md §3.3).
      this.log.warn("probe failed", { error });
      return { status: 200, body: { status: "unavailable", message: publicFailure("the availability check", error) } };
    }
  }

  create(body: CreateSessionBody, acceptedTerms: string | undefined): Outcome {
    return this.#admit(planSession(body, acceptedTerms, this.#admissionContext()));
  }

  createFromCatalog(name: string, body: AppSessionBody, acceptedTerms: string | undefined): Outcome {
    return this.#admit(planAppSession(name, body, acceptedTerms, this.#admissionContext()));
  }

  document(id: string): Outcome {
    const session = this.registry.get(id);
    return session ? { status: 200, body: session.toDocument() } : notFound(id);
  }

  async stop(id: string): Promise<Outcome> {
    const session = this.registry.get(id);
    if (!session) return { status: 204 };
    session.userStopped = true;
    session.stopRequested.abort();
    // A suspended session has no workload to stop: the stop ends it (it can no longer be resumed).
    if (session.status.kind === "suspended") {
      this.#emitStatus(session, { kind: "stopped" });
      return { status: 204 };
    }
    // Before the workload exists the launch path stops it as soon as it materialises.
    if (!session.workload) return { status: 204 };
    try {
      await session.workload.stop();
      return { status: 204 };
    } catch (error) {
      this.log.warn("stop failed", { sessionId: id, error });
      return { status: 500, body: { error: "stop_failed", message: `${publicFailure("stopping the session", error)}; retry the DELETE` } };
    }
  }

  async workspaceTree(id: string): Promise<Outcome> {
    const session = this.#watchSession(id);
    if (!(session instanceof Session)) return session;
    const workspace = session.workload?.workspace;
    if (!workspace) return noLiveWorkspace;
    try {
      return { status: 200, body: await workspace.tree() };
    } catch (error) {
      return workspaceFailure(error);
    }
  }

  async workspaceApply(id: string, changes: WorkspaceChangeSetBody): Promise<Outcome> {
    const session = this.#watchSession(id);
    if (!(session instanceof Session)) return session;
    if (!session.reloadBudget.tryAdmit(Date.now())) {
      return {
        status: 429,
        body: { error: "reload_rate_limited", message: `more than ${this.config.watch.reloadLimit} workspace writes in the last minute` },
      };
    }
    const workspace = session.workload?.workspace;
    if (!workspace) return noLiveWorkspace;
    for (const path of [...(changes.write ?? []).map((write) => write.path), ...(changes.delete ?? [])]) {
      if (normaliseRelativePath(path) === undefined) {
        return { status: 400, body: { error: "invalid_path", message: invalidPathMessage(path) } };
      }
    }
    try {
      // Forwarded as sent: paths are validated, not rewritten (contract.md §3.9).
      return { status: 200, body: await workspace.apply(changes) };
    } catch (error) {
      return workspaceFailure(error);
    }
  }

  async workspaceFile(id: string, rawPath: string | undefined): Promise<Outcome> {
    const session = this.#watchSession(id);
    if (!(session instanceof Session)) return session;
    const workspace = session.workload?.workspace;
    if (!workspace) return noLiveWorkspace;
    const path = rawPath?.trim() ?? "";
    if (path === "") return { status: 400, body: { error: "invalid_path", message: "?path= is required" } };
    if (normaliseRelativePath(path) === undefined) {
      return { status: 400, body: { error: "invalid_path", message: invalidPathMessage(path) } };
    }
    try {
      return { status: 200, body: await workspace.file(path) };
    } catch (error) {
      return workspaceFailure(error);
    }
  }

  async reload(id: string, appName: string | undefined): Promise<Outcome> {
    const session = this.#watchSession(id);
    if (!(session instanceof Session)) return session;
    const workload = session.workload;
    if (!workload?.reload) return noLiveWorkload;
    if (!session.reloadBudget.tryAdmit(Date.now())) {
      return {
        status: 429,
        body: { error: "reload_rate_limited", message: `more than ${this.config.watch.reloadLimit} reloads in the last minute` },
      };
    }
    if (appName !== undefined && !session.apps.has(appName)) {
      return { status: 404, body: { error: "unknown_app", message: `session runs no app named '${appName}'` } };
    }
    const targets = appName !== undefined ? [appName] : [...session.apps.keys()];
    for (const target of targets) session.apps.get(target)?.run.setNextTrigger("manual");
    try {
      for (const target of targets) await workload.reload(target);
    } catch (error) {
      return workspaceFailure(error);
    }
    return { status: 202, body: { reloaded: targets } };
  }

  async setApps(id: string, body: SetAppsBody): Promise<Outcome> {
    const session = this.#watchSession(id);
    if (!(session instanceof Session)) return session;
    const workload = session.workload;
    if (!workload?.setApps) return noLiveWorkload;
    const apps = resolveApps(body.apps, this.backend.validateAppName?.bind(this.backend));
    if (isRefusal(apps)) return apps;
    const added = apps.filter((app) => !session.apps.has(app.name));
    for (const app of added) session.addApp(app, "resume");
    for (const channel of session.apps.values()) channel.run.setNextTrigger("resume");
    try {
      await workload.setApps(apps);
    } catch (error) {
      for (const app of added) session.apps.delete(app.name);
      this.log.warn("changing the app set failed", { sessionId: session.id, error });
      const message = publicFailure("changing the app set", error);
      this.#emitStatus(session, { kind: "failed", message });
      return { status: 500, body: { error: "set_apps_failed", message } };
    }
    const kept = new Set(apps.map((app) => app.name));
    for (const name of [...session.apps.keys()]) if (!kept.has(name)) session.apps.delete(name);
    session.launch = { ...session.launch, apps };
    return { status: 202, body: { apps: apps.map((app) => app.name) } };
  }

  resume(id: string): Outcome {
    const session = this.registry.get(id);
    if (!session || session.status.kind !== "suspended") {
      return { status: 404, body: { error: "not_suspended", message: `session '${id}' is not suspended` } };
    }
    if (!session.checkpoint) {
      return { status: 409, body: { error: "no_checkpoint", message: `session '${id}' has no checkpoint to resume from` } };
    }
    for (const channel of session.apps.values()) channel.run.setNextTrigger("resume");
    session.workload = undefined;
    session.userStopped = false;
    session.stopRequested = new AbortController();
    const entry = session.launch.apps[0]?.entryRelativePath || "telo.yaml";
    session.launch = {
      ...session.launch,
      bundle: {
        entryRelativePath: entry,
        files: session.checkpoint.files.map((file) => ({
          relativePath: file.path,
          contents: file.content,
          encoding: file.encoding,
        })),
      },
    };
    this.#emitStatus(session, { kind: "starting" });
    void this.#launch(session);
    return { status: 202, body: { sessionId: id } };
  }

  /** One tick of the watch supervisor: suspend idle sessions, refresh checkpoints. */
  async superviseWatchSessions(now: number): Promise<void> {
    const jobs: Promise<void>[] = [];
    for (const session of this.registry.all()) {
      if (session.mode !== "watch" || session.status.kind !== "running" || this.#watchJobs.has(session.id)) continue;
      const idle = session.subscribers === 0 && session.idleSince !== null && now - session.idleSince >= this.config.watch.idleMs;
      const checkpointDue = !session.checkpoint || now - session.checkpoint.at >= this.config.watch.checkpointMs;
      if (!idle && !checkpointDue) continue;
      this.#watchJobs.add(session.id);
      const job = (idle ? this.#suspend(session) : this.#checkpoint(session)).finally(() => this.#watchJobs.delete(session.id));
      jobs.push(job);
    }
    await Promise.all(jobs);
  }

  /**
   * Boot: takes over the sessions an earlier supervisor left running (restart safety). They
   * keep their ids and stream URLs; their history starts anew past any old id.
   */
  async adoptSessions(): Promise<number> {
    const adoptable = (await this.backend.adoptSessions?.()) ?? [];
    const firstStreamId = adoptedStreamBase(Date.now());
    for (const { spec, resume } of adoptable) {
      const session = new Session({
        launch: spec,
        agent: spec.agent,
        replayBufferBytes: this.config.replayBufferBytes,
        reloadLimit: this.config.watch.reloadLimit,
        now: new Date(spec.createdAt),
        firstStreamId,
      });
      this.registry.restore(session);
      void this.#launch(session, resume);
    }
    return adoptable.length;
  }

  /** SIGTERM: mark everything user-stopped, then stop every live workload. */
  async shutdown(): Promise<void> {
    this.#shuttingDown = true;
    if (this.#watchTimer) clearInterval(this.#watchTimer);
    const sessions = this.registry.all();
    for (const session of sessions) {
      session.userStopped = true;
      session.stopRequested.abort();
    }
    await Promise.allSettled(sessions.map((session) => session.workload?.stop()));
    await this.backend.close?.();
  }

  async #checkpoint(session: Session): Promise<void> {
    const workspace = session.workload?.workspace;
    if (!workspace) return;
    try {
      const snapshot = await workspace.snapshot();
      session.checkpoint = { files: snapshot.files, at: Date.now() };
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
      session.checkpoint = { files: snapshot.files, at: Date.now() };
      await workload.suspend();
    } catch (error) {
      this.log.warn("watch session suspend failed; retrying next tick", { sessionId: session.id, error });
      return;
    }
    session.workload = undefined;
    this.#emitStatus(session, { kind: "suspended" });
  }

  #admissionContext(): AdmissionContext {
    return {
      terms: this.config.terms,
      catalog: this.config.apps,
      watchEnabled: this.config.watch.enabled,
      watchMaxSessions: this.config.watch.maxSessions,
      liveWatchSessions: this.registry.liveWatchCount(),
      defaultRegistryUrl: this.config.defaultRegistryUrl,
      validateConfig: this.backend.validateConfig?.bind(this.backend),
      validateAppName: this.backend.validateAppName?.bind(this.backend),
    };
  }

  #admit(plan: ReturnType<typeof planSession>): Outcome {
    if (isRefusal(plan)) return plan;
    if (this.#shuttingDown) {
      return { status: 503, body: { error: "shutting_down", message: "the runner is shutting down" } };
    }
    const now = new Date();
    const session = new Session({
      launch: this.#startSpec(newSessionId(), now, plan),
      agent: plan.agent,
      replayBufferBytes: this.config.replayBufferBytes,
      reloadLimit: this.config.watch.reloadLimit,
      now,
    });
    if (!this.registry.admit(session)) {
      return {
        status: 409,
        body: { error: "too_many_sessions", message: `runner is at its configured max of ${this.config.maxSessions} concurrent sessions` },
      };
    }
    if (plan.notice) session.append({ type: "progress", phase: "provision", message: plan.notice });
    void this.#launch(session);
    return {
      status: 201,
      body: { sessionId: session.id, streamUrl: `/v1/sessions/${session.id}/events`, createdAt: now.toISOString() },
    };
  }

  #startSpec(sessionId: string, now: Date, plan: SessionPlan): StartSpec {
    return {
      sessionId,
      createdAt: now.toISOString(),
      mode: plan.mode,
      apps: plan.apps,
      env: plan.env,
      config: plan.config,
      bundle: plan.bundle,
      inspect: plan.inspect,
      selfContained: plan.selfContained,
      ...(plan.agent && { agent: plan.agent }),
    };
  }

  /** Starts the session's workload in the background; start errors end up on the stream. */
  async #launch(
    session: Session,
    start: (callbacks: BackendCallbacks) => Promise<Workload> = (callbacks) => this.backend.start(session.launch, callbacks),
  ): Promise<void> {
    // A `running` reported before the start settles is held back until the workload handle
    // is in place, so a client that sees `running` can type, and use the workspace, at once.
    const launch: LaunchState = { settled: false, heldRunning: undefined };
    try {
      const workload = await start(this.#callbacks(session, launch));
      session.workload = workload;
      launch.settled = true;
      if (launch.heldRunning) this.#emitStatus(session, launch.heldRunning);
      void workload.done.then(() => {
        if (session.workload === workload) session.workload = undefined;
      });
      // A stop (DELETE or shutdown) that arrived while starting takes effect now.
      if (session.userStopped || session.disposed) await workload.stop();
    } catch (error) {
      launch.settled = true;
      const message =
        error instanceof SessionStartError
          ? `${error.stage}: ${error.message}`
          : `start: ${error instanceof Error ? error.message : String(error)}`;
      this.log.warn("session start failed", { sessionId: session.id, error });
      this.#emitStatus(session, session.userStopped ? { kind: "stopped" } : { kind: "failed", message });
    }
  }

  #callbacks(session: Session, launch: LaunchState): BackendCallbacks {
    const append = (event: RunEvent) => {
      if (!session.disposed) session.append(event);
    };
    return {
      onStatus: (status) => {
        if (!launch.settled && status.kind === "running") launch.heldRunning = status;
        else this.#emitStatus(session, status);
      },
      onProgress: (phase, message, done, app) =>
        append({ type: "progress", ...(app !== undefined && { app }), phase, message, ...(done !== undefined && { done }) }),
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
      stopRequested: session.stopRequested.signal,
    };
  }

  /** Records a status: at most one terminal status per session, retention timers follow. */
  #emitStatus(session: Session, status: RunStatus): void {
    if (session.disposed || session.terminal) return;
    session.append({ type: "status", status });
    this.registry.statusChanged(session, status, new Date());
  }

  #watchSession(id: string): Session | Outcome {
    const session = this.registry.get(id);
    if (!session) return notFound(id);
    if (session.mode !== "watch") return notAWatchSession;
    return session;
  }
}
