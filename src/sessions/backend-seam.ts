/**
 * The backend seam (docs/architecture.md "The backend seam"): how the core asks a backend to run
 * a session's workload and how the backend reports back. The Kubernetes backend implements
 * it; tests use a scripted backend.
 */
import type { CatalogEntry } from "../config/apps-catalog.ts";
import type {
  AvailabilityReport,
  ByteStreamTag,
  DebugFrame,
  EndpointChange,
  ProbeConfig,
  ReachabilityState,
  ResolvedApp,
  RunBundle,
  RunPhase,
  RunStatus,
  SessionMode,
  WorkspaceApplyResult,
  WorkspaceChangeSet,
  WorkspaceFile,
  WorkspaceSnapshot,
  WorkspaceTree,
} from "../contract/wire.ts";
import type { SessionConfig } from "../contract/session-config.ts";
import type { RunOutcome } from "./run-projection.ts";

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
  /** A notice for the stream's first event: the agent was dropped, and why. */
  notice?: string;
};

export type BackendCallbacks = {
  onStatus(status: RunStatus): void;
  onProgress(phase: RunPhase, message: string, done?: boolean, app?: string): void;
  onOutput(app: string, bytes: Uint8Array, tag: ByteStreamTag): void;
  onDebug(app: string, frame: DebugFrame): void;
  onReachability(app: string, port: number, state: ReachabilityState): void;
  onRunEnded(app: string, outcome: RunOutcome): void;
  onEndpoints(app: string, change: EndpointChange): void;
  isUserStopped(): boolean;
  /**
   * Aborted when the user stops the session (DELETE, shutdown), including before the start
   * has settled: a backend waiting on a slow start gives up at once instead of making the
   * stop wait for its start deadline.
   */
  stopRequested: AbortSignal;
};

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
  resume(callbacks: BackendCallbacks): Promise<Workload>;
};

export type Backend = {
  start(spec: StartSpec, callbacks: BackendCallbacks): Promise<Workload>;
  /** Called once at boot: the sessions to re-adopt; anything else left over is the backend's to reap. */
  adoptSessions?(): Promise<AdoptableSession[]>;
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
