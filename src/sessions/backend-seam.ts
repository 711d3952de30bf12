/**
 * The backend seam (docs/architecture.md "The backend seam"): how the core asks a backend to run
 * a session's workload and how the backend reports back. The Kubernetes backend implements
 * it; tests use a scripted backend.
 */
import type { CatalogEntry } from "../config/apps-catalog.ts";
import * as v from "valibot";
import {
  ByteStreamTagSchema,
  DebugEventSchema,
  EndpointsEventSchema,
  ProgressEventSchema,
  ReachabilityEventSchema,
  RouteEventSchema,
  StatusEventSchema,
  TimelineEntrySchema,
  type AvailabilityReport,
  type ProbeConfig,
  type ResolvedApp,
  type RunBundle,
  type RunStatus,
  type SessionMode,
  type WorkspaceApplyResult,
  type WorkspaceChangeSet,
  type WorkspaceFile,
  type WorkspaceSnapshot,
  type WorkspaceTree,
} from "../contract/wire.ts";
import type { SessionConfig } from "../contract/session-config.ts";
import { RunOutcomeSchema } from "./run-projection.ts";
import type { SavedStreams, StreamIds } from "./stream-marks.ts";
import type { WorkloadToken } from "./workload-token.ts";

/**
 * A session's launch description: what admission decided (src/sessions/admission.ts builds it
 * as it is, no copy), what the backend starts, and what a pod's record rebuilds at adoption.
 */
export type StartSpec = {
  sessionId: string;
  createdAt: string;
  mode: SessionMode;
  /** Each with its io resolved and, when it names one, its Telo version. */
  apps: ResolvedApp[];
  /** Final workload env (docs/api.md "Creating a session"). */
  env: Record<string, string>;
  /** The session config, parsed once by the config gate; extra keys kept. */
  config: SessionConfig;
  bundle: RunBundle;
  inspect: boolean;
  /** A predefined-app session: the image's own entrypoint, no bundle. */
  selfContained: boolean;
  agent?: CatalogEntry;
  /**
   * The session's workload token, when its catalog app or agent names a `tokenEnv`
   * (docs/events-and-tokens.md). A credential: never logged, never in a pod's record.
   */
  token?: WorkloadToken;
  /** A notice for the stream's first event: the agent was dropped, and why. */
  notice?: string;
};

/** Output bytes of one app, to its byte channel (not an SSE event). */
const OutputEventSchema = v.object({
  type: v.literal("output"),
  app: v.string(),
  bytes: v.custom<Uint8Array>((input) => input instanceof Uint8Array, "bytes must be a Uint8Array"),
  tag: ByteStreamTagSchema,
});

/** An app's workload ended under a run (the run projection closes the open generation). */
const RunEndedEventSchema = v.object({
  type: v.literal("runEnded"),
  app: v.string(),
  outcome: RunOutcomeSchema,
});

/** A stage of the start the backend saw (the pod's status dates most): to the session's timeline, not the stream. */
const StageEventSchema = v.object({ type: v.literal("stage"), ...TimelineEntrySchema.entries });

/**
 * Everything a backend reports about a running session, through one channel. Most are wire
 * events the session records as they are; a new wire event only needs its emitter.
 */
export const BackendEventSchema = v.union([
  StatusEventSchema,
  ProgressEventSchema,
  DebugEventSchema,
  ReachabilityEventSchema,
  EndpointsEventSchema,
  RouteEventSchema,
  OutputEventSchema,
  RunEndedEventSchema,
  StageEventSchema,
]);
export type BackendEvent = v.InferOutput<typeof BackendEventSchema>;

export type BackendCallbacks = {
  emit(event: BackendEvent): void;
  isUserStopped(): boolean;
  /**
   * Aborted when the user stops the session (DELETE, shutdown), including before the start
   * has settled: a backend waiting on a slow start gives up at once instead of making the
   * stop wait for its start deadline.
   */
  stopRequested: AbortSignal;
};

export type RunningStatus = Extract<RunStatus, { kind: "running" }>;

/**
 * A settled start: the workload, and the `running` status the core reports once the handle is
 * in place (a client that sees `running` can type at once). Absent when the workload had
 * already ended (an adopted pod that finished while no supervisor watched it).
 */
export type Started = { workload: Workload; running: RunningStatus | undefined };

export type WorkspaceClient = {
  tree(): Promise<WorkspaceTree>;
  apply(changes: WorkspaceChangeSet): Promise<WorkspaceApplyResult>;
  file(path: string): Promise<WorkspaceFile>;
  snapshot(): Promise<WorkspaceSnapshot>;
};

export type Workload = {
  writeStdin(app: string, bytes: Uint8Array): void;
  resize(app: string, cols: number, rows: number): void;
  /** Settles after the terminal status was emitted; never rejects. */
  readonly done: Promise<void>;
  /** Idempotent. */
  stop(): Promise<void>;
  /**
   * Stops following the workload without ending it (its session moved to another replica): no
   * status, the pod left running for its new owner. Idempotent; settles `done`.
   */
  release?(): void;
  /**
   * Another replica takes the session over (docs/replicas.md "Output across a handover"): as
   * `release`, and before it settles the ids handed out last (`ids`, no more follow) are saved
   * with where each app's output stands, for the successor to continue from.
   */
  handOver?(ids: StreamIds): Promise<void>;
  /** Saves a ceiling the ids handed out stay below until the next one (a crashed owner's successor starts past it). */
  saveCeiling?(ceiling: StreamIds): Promise<void>;
  /** Watch sessions: the live workspace, or undefined between pods. */
  readonly workspace?: WorkspaceClient | undefined;
  reload?(app: string): Promise<void>;
  setApps?(apps: ResolvedApp[]): Promise<void>;
  suspend?(): Promise<void>;
};

/** What the backend contributes to /v1/capabilities (docs/api.md "Capabilities"). */
export type BackendDescription = {
  displayName: string;
  description: string;
  io: ("tty" | "streams")[];
  ports: boolean;
  config: {
    imageDefault: string;
    imageEnum?: string[];
    enforced: boolean;
    pullPolicyDefault?: "missing" | "always" | "never";
    pullPolicyDescription?: string;
    registryUrl: boolean;
  };
};

/** A session an earlier supervisor left running, which this one takes over (restart safety). */
export type AdoptableSession = {
  spec: StartSpec;
  resume(callbacks: BackendCallbacks): Promise<Started>;
  /** The stream ids its last owner saved, when it saved any (as the pod had them when this owner claimed it). */
  streams?: SavedStreams;
  /** Whether this owner's ceiling (AdoptionCeiling) is on the pod; if not, it is saved later (see Workload.saveCeiling). */
  claimed: boolean;
};

/**
 * The ceiling an adopting owner claims on a session's pod, in the same write as the adoption's
 * fencing stamp and before it hands out any id: from what the last owner saved there, as that
 * write finds it, and the session's apps.
 */
export type AdoptionCeiling = (saved: SavedStreams | undefined, apps: readonly string[]) => StreamIds;

export type Backend = {
  start(spec: StartSpec, callbacks: BackendCallbacks): Promise<Started>;
  /**
   * The sessions `mine` selects, to take over from their pods (each claimed, its older pods
   * reaped). What no session explains is the duties holder's (`housekeep`).
   */
  adoptSessions?(ceiling: AdoptionCeiling, mine: (sessionId: string) => boolean): Promise<AdoptableSession[]>;
  /** The housekeeping of the singleton duties: reaping what no session explains, the warm pool's pods. */
  housekeep?(): Promise<void>;
  /** The duties Lease is lost or given up: the duties holder's work (warm pool refill and reaping) stops here. */
  dutiesLost?(): void;
  /**
   * A claim answer another replica hands to the maker of the pool pod it claimed: delivered to
   * the pod's poll; false when this replica does not hold the pod's token.
   */
  receivePoolClaim?(pod: string, answer: string): boolean;
  probe(config: ProbeConfig): Promise<AvailabilityReport>;
  /** Re-resolved on every capabilities request (the image picker may refresh). */
  describe(): BackendDescription;
  /** The backend's config gate: a refusal message, or undefined to accept. */
  validateConfig?(config: SessionConfig): string | undefined;
  /**
   * Present when the backend runs apps at a named Telo version (`features.teloVersions`): the
   * reason it cannot supply this one, or undefined when it can.
   */
  supplyTelo?(version: string): string | undefined;
  /** The backend's limits on app names beyond the contract's: a refusal message, or undefined. */
  validateAppName?(name: string): string | undefined;
  /** Called once on shutdown after every session was stopped. */
  close?(): Promise<void>;
};

/** What the warm pool knows of the other replicas. */
export type PoolPeers = {
  /** This replica's identity: the maker of the pool pods it creates. */
  identity: string;
  /** The live members' identities as judged now, this replica's own included. */
  live(): ReadonlySet<string>;
  /** Hands a claim's answer to the replica that made the pod; rejects when it cannot be handed. */
  handClaim(maker: string, pod: string, answer: string): Promise<void>;
};

/** A write the fence refused: the session is another replica's now; the client retries there. */
export class SessionMoved extends Error {
  override name = "SessionMoved";
}

export type StartStage = "pull" | "inspect" | "daemon" | "create" | "attach" | "start";

/** A start failure; the core reports it on the stream as `failed` "<stage>: <message>". */
export class SessionStartError extends Error {
  override name = "SessionStartError";
  constructor(
    readonly stage: StartStage,
    message: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
}
