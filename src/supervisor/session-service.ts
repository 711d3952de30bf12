/**
 * The supervisor's sessions: admission into the registry, the capabilities and probe answers,
 * the session document and the stop. It composes the parts that do the rest: the launcher
 * (workload starts and their events), the watch surface (workspace, reload, app set, resume),
 * the watch supervisor (idle suspend, checkpoints) and the boot-time adoption. Methods answer
 * with the route's result or raise a Problem; HTTP is the internal server's business.
 */
import type { CoreConfig } from "../config/core.ts";
import { coResidentAgentNames } from "../config/apps-catalog.ts";
import { mintWorkloadToken } from "../sessions/workload-token.ts";
import { capabilitiesDocument, configJsonSchema } from "../contract/capabilities.ts";
import { newSessionId } from "../contract/ids.ts";
import { Problem } from "../contract/problem.ts";
import { publicFailure } from "../contract/public-error.ts";
import { parseSessionConfig } from "../contract/session-config.ts";
import type { AppSessionBody, CreateSessionBody } from "../contract/requests.ts";
import type { Capabilities, PlacementAnswer } from "../contract/responses.ts";
import type { AvailabilityReport, CreatedSession, ProbeConfig, SessionDocument } from "../contract/wire.ts";
import type { Logger } from "../log.ts";
import { type AdmissionContext, planAppSession, planSession } from "../sessions/admission.ts";
import { type Backend, SessionMoved, type StartSpec } from "../sessions/backend-seam.ts";
import type { SessionOwnership } from "../sessions/ownership-seam.ts";
import { Registry } from "../sessions/registry.ts";
import { Session } from "../sessions/session.ts";
import { adoptSessions } from "./adoption.ts";
import { lastIds } from "../sessions/stream-marks.ts";
import { StreamCeilings } from "./stream-ceilings.ts";
import { notServingYet, servedElsewhere, sessionNotFound } from "./problems.ts";
import { PlacementFollowers } from "./placement-followers.ts";
import { SessionLauncher } from "./session-launch.ts";
import { WatchSupervisor } from "./watch-supervisor.ts";
import { WatchSurface } from "./watch-surface.ts";

export type SupervisorTimings = {
  /** SSE heartbeat cadence (docs/api.md "Event stream (SSE)"). */
  heartbeatMs: number;
  /** Watch supervisor tick (docs/api.md "Watch sessions"). */
  watchTickMs: number;
  /** Resize coalescing window (docs/api.md "Terminal (WebSocket)"). */
  resizeThrottleMs: number;
};

export const DEFAULT_TIMINGS: SupervisorTimings = { heartbeatMs: 20_000, watchTickMs: 5_000, resizeThrottleMs: 50 };

export class SessionService {
  readonly registry: Registry;
  readonly watch: WatchSurface;
  readonly #launcher: SessionLauncher;
  readonly #watchSupervisor: WatchSupervisor;
  /** The stream-id ceilings of owned sessions (several replicas: docs/replicas.md). */
  readonly ceilings: StreamCeilings;
  /** The api's waits for the placement to change. */
  readonly #placementFollowers: PlacementFollowers;
  #shuttingDown = false;

  constructor(
    readonly config: CoreConfig,
    readonly backend: Backend,
    readonly ownership: SessionOwnership,
    readonly log: Logger,
    readonly timings: SupervisorTimings = DEFAULT_TIMINGS,
  ) {
    this.registry = new Registry({
      maxSessions: config.maxSessions,
      exitTtlMs: config.exitTtlMs,
      suspendedTtlMs: config.watch.suspendedTtlMs,
    });
    this.#launcher = new SessionLauncher(backend, this.registry, log);
    this.watch = new WatchSurface(this.registry, backend, this.#launcher, config.watch.reloadLimit);
    this.#watchSupervisor = new WatchSupervisor(config.watch, this.registry, this.#launcher, log);
    this.ceilings = new StreamCeilings(this.registry, log);
    this.#placementFollowers = new PlacementFollowers(ownership);
  }

  startWatchSupervisor(): void {
    this.#watchSupervisor.start(this.timings.watchTickMs);
  }

  /** One tick of the watch supervisor (the timer's, or a test's). */
  superviseWatchSessions(now: number): Promise<void> {
    return this.#watchSupervisor.tick(now);
  }

  /** The sessions `mine` selects, taken over from their pods. */
  adoptSessions(mine: (sessionId: string) => boolean): Promise<number> {
    return adoptSessions(this.backend, this.registry, this.#launcher, this.config, Date.now(), mine, this.ceilings);
  }

  /**
   * Whether a request for `id` is this process's to answer now. Not while the session is not (or
   * no longer) its own, whatever its registry still holds: a replica resumed from a pause longer
   * than its hold must not answer from what it had (docs/replicas.md "Fencing the data plane").
   */
  servedElsewhere(id: string): boolean {
    return !this.ownership.serves(id);
  }

  /** Sessions changed hands between the other replicas (the peer route): look again now. */
  shardsMoved(): void {
    this.ownership.nudge();
  }

  /**
   * Where each session is served, for the api's forwarding: at once when the api's last known
   * version is not the current one, else once it changes (or after a hold, the same answer).
   */
  placement(afterVersion: string | undefined): Promise<PlacementAnswer> {
    return this.#placementFollowers.next(afterVersion);
  }

  /**
   * The sessions `moving` selects are another replica's now: let go without ending them, each
   * handing over the ids it gave out last (docs/replicas.md "Output across a handover"), within
   * `boundMs` altogether where given (a slow apiserver must not hold an exit), else for as long
   * as the saves take (each call has its own deadline).
   */
  async letGo(moving: (sessionId: string) => boolean, boundMs?: number): Promise<number> {
    const sessions = this.registry.all().filter((session) => moving(session.id));
    let unsaved = sessions.length;
    const handovers = sessions.map(async (session) => {
      // A session still starting is handed over once its start settled, so that its pod exists
      // for the successor to take over: a `201` answered here is not lost to a move.
      await this.#launcher.settled(session);
      this.registry.letGo(session.id);
      const workload = session.workload;
      const saving = workload?.handOver !== undefined;
      try {
        if (workload?.handOver) await workload.handOver(lastIds(session));
        else await workload?.release?.();
      } catch (error) {
        const what = saving ? "could not save the session's stream positions at its handover" : "could not let the session's workload go at its handover";
        this.#launcher.logFor(session).warn(what, { error });
      } finally {
        unsaved -= 1;
      }
    });
    let timer: NodeJS.Timeout | undefined;
    const bound = new Promise<void>((resolve) => boundMs !== undefined && (timer = setTimeout(resolve, boundMs)));
    await Promise.race([Promise.all(handovers), bound]).finally(() => clearTimeout(timer));
    // Their successor starts their streams past the saved ids it cannot find: each client is told of a gap.
    if (unsaved > 0) this.log.warn("the handover went on before every session's stream positions were saved", { unsaved, sessions: sessions.length, boundMs });
    return sessions.length;
  }

  capabilities(): Capabilities {
    const backend = this.backend.describe();
    return capabilitiesDocument({
      displayName: backend.displayName,
      description: backend.description,
      configSchema: configJsonSchema({ ...backend.config, teloVersions: this.backend.supplyTelo !== undefined }),
      teloVersions: this.backend.supplyTelo !== undefined,
      io: backend.io,
      ports: backend.ports,
      watch: this.config.watch.enabled,
      agents: coResidentAgentNames(this.config.apps),
      terms: this.config.terms,
      apps: [...this.config.apps.values()],
    });
  }

  async probe(config: ProbeConfig): Promise<AvailabilityReport> {
    // The same config gate as a create: any object, but a known key of the wrong shape is
    // refused naming it, rather than probed as if it meant something.
    const gate = parseSessionConfig(config);
    if ("refusal" in gate) throw new Problem("invalid", "invalid_config", gate.refusal);
    try {
      return await this.backend.probe(config);
    } catch (error) {
      // An unavailable backend is a report, never a 5xx (docs/api.md "Routes"); the error's own
      // text (a client library's) goes to the log only.
      this.log.warn("probe failed", { error });
      return { status: "unavailable", message: publicFailure("the availability check", error) };
    }
  }

  create(body: CreateSessionBody, acceptedTerms: string | undefined): CreatedSession {
    return this.#admit(planSession(body, acceptedTerms, this.#admissionContext()));
  }

  createFromCatalog(name: string, body: AppSessionBody, acceptedTerms: string | undefined): CreatedSession {
    return this.#admit(planAppSession(name, body, acceptedTerms, this.#admissionContext()));
  }

  session(id: string): Session {
    const session = this.registry.get(id);
    if (!session) throw sessionNotFound(id);
    return session;
  }

  document(id: string): SessionDocument {
    return this.session(id).toDocument();
  }

  /** Idempotent: an unknown id is already stopped. */
  async stop(id: string): Promise<void> {
    const session = this.registry.get(id);
    if (!session) return;
    session.requestStop();
    // A suspended session has no workload to stop: the stop ends it (it can no longer be resumed).
    if (session.status.kind === "suspended") return this.#launcher.emitStatus(session, { kind: "stopped" });
    // Before the workload exists the launch path stops it as soon as it materialises.
    try {
      await session.workload?.stop();
    } catch (error) {
      // The fence refused the pod's delete: another replica has the session now, and this one
      // has let it go; the client's retry reaches the owner.
      if (error instanceof SessionMoved) throw servedElsewhere(id);
      this.log.warn("stop failed", { sessionId: id, error });
      throw new Problem("failed", "stop_failed", `${publicFailure("stopping the session", error)}; retry the DELETE`);
    }
  }

  /** SIGTERM: mark everything user-stopped, then stop every live workload. */
  async shutdown(): Promise<void> {
    this.#shuttingDown = true;
    this.#watchSupervisor.stop();
    this.#placementFollowers.close();
    const sessions = this.registry.all();
    for (const session of sessions) session.requestStop();
    await Promise.allSettled(sessions.map((session) => session.workload?.stop()));
    await this.backend.close?.();
  }

  #admissionContext(): AdmissionContext {
    return {
      sessionId: this.#newSessionId(),
      now: new Date(),
      terms: this.config.terms,
      catalog: this.config.apps,
      watchEnabled: this.config.watch.enabled,
      watchMaxSessions: this.config.watch.maxSessions,
      liveWatchSessions: this.registry.liveWatchCount(),
      defaultRegistryUrl: this.config.defaultRegistryUrl,
      validateConfig: this.backend.validateConfig?.bind(this.backend),
      validateAppName: this.backend.validateAppName?.bind(this.backend),
      io: this.backend.describe().io,
      supplyTelo: this.backend.supplyTelo?.bind(this.backend),
      mintToken: () => mintWorkloadToken(),
    };
  }

  #newSessionId(): string {
    const id = this.ownership.mintSessionId(newSessionId);
    if (id === undefined) throw notServingYet();
    return id;
  }

  #admit(plan: StartSpec): CreatedSession {
    if (this.#shuttingDown) throw new Problem("unavailable", "shutting_down", "the runner is shutting down");
    const session = new Session({
      launch: plan,
      agent: plan.agent,
      replayBufferBytes: this.config.replayBufferBytes,
      reloadLimit: this.config.watch.reloadLimit,
      now: new Date(plan.createdAt),
    });
    if (!this.registry.admit(session)) {
      throw new Problem(
        "conflict",
        "too_many_sessions",
        `runner is at its configured max of ${this.config.maxSessions} concurrent sessions`,
      );
    }
    this.#launcher.logFor(session).info("session admitted", { mode: session.mode, apps: [...session.apps.keys()] });
    if (plan.notice) session.append({ type: "progress", phase: "provision", message: plan.notice });
    void this.#launcher.launch(session);
    return { sessionId: session.id, streamUrl: `/v1/sessions/${session.id}/events`, createdAt: plan.createdAt };
  }
}
