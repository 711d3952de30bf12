/**
 * The `/v1` wire types (docs/api.md) as valibot schemas; every TypeScript type of the
 * contract is inferred from these, so the wire shape is written exactly once.
 */
import * as v from "valibot";

export const DEFAULT_APP_NAME = "app";

export const PullPolicySchema = v.picklist(["missing", "always", "never"]);
export type PullPolicy = v.InferOutput<typeof PullPolicySchema>;

export const IoModeSchema = v.picklist(["tty", "streams"]);
export type IoMode = v.InferOutput<typeof IoModeSchema>;

export const SessionModeSchema = v.picklist(["run", "watch"]);
export type SessionMode = v.InferOutput<typeof SessionModeSchema>;

export const ProtocolSchema = v.picklist(["tcp", "udp"]);
export type Protocol = v.InferOutput<typeof ProtocolSchema>;

export const PortMappingSchema = v.object({
  port: v.pipe(v.number(), v.integer(), v.minValue(1), v.maxValue(65535)),
  protocol: ProtocolSchema,
});
export type PortMapping = v.InferOutput<typeof PortMappingSchema>;

export const RunnerEndpointSchema = v.object({
  host: v.string(),
  port: v.number(),
  protocol: ProtocolSchema,
  url: v.optional(v.string()),
  /** The session's workload token, when the app's catalog entry names a `tokenEnv`. */
  token: v.optional(
    v.pipe(
      v.string(),
      v.description(
        "The session's workload token (32 base32 characters, 160 random bits), on the endpoints of an app session whose catalog entry names a `tokenEnv` and on `running.agent` when the agent's entry does; the workload reads the same value from that env variable (docs/events-and-tokens.md).",
      ),
    ),
  ),
});
export type RunnerEndpoint = v.InferOutput<typeof RunnerEndpointSchema>;

export const BundleFileSchema = v.object({
  relativePath: v.pipe(v.string(), v.minLength(1)),
  contents: v.string(),
  encoding: v.optional(v.picklist(["utf8", "base64"])),
});
export type BundleFile = v.InferOutput<typeof BundleFileSchema>;

export const RunBundleSchema = v.object({
  entryRelativePath: v.pipe(v.string(), v.minLength(1)),
  files: v.array(BundleFileSchema),
});
export type RunBundle = v.InferOutput<typeof RunBundleSchema>;

/** An app as the session holds it: every field resolved (docs/api.md "Creating a session"). */
export const ResolvedAppSchema = v.object({
  name: v.string(),
  entryRelativePath: v.string(),
  ports: v.array(PortMappingSchema),
  io: IoModeSchema,
  /** The Telo version whose kernel image runs the app (docs/telo-versions.md); absent: the configured image. */
  telo: v.optional(v.string()),
});
export type ResolvedApp = v.InferOutput<typeof ResolvedAppSchema>;

/** The probe's config: any JSON object, like a session's (docs/telo-versions.md). */
export const ProbeConfigSchema = v.record(v.string(), v.unknown());
export type ProbeConfig = v.InferOutput<typeof ProbeConfigSchema>;

export const RunStatusSchema = v.variant("kind", [
  v.object({ kind: v.literal("starting") }),
  v.object({
    kind: v.literal("running"),
    endpoints: v.optional(v.array(RunnerEndpointSchema)),
    inspectUrl: v.optional(v.string()),
    agent: v.optional(RunnerEndpointSchema),
  }),
  v.object({ kind: v.literal("exited"), code: v.number() }),
  v.object({ kind: v.literal("suspended") }),
  v.object({ kind: v.literal("failed"), message: v.string() }),
  v.object({ kind: v.literal("stopped") }),
]);
export type RunStatus = v.InferOutput<typeof RunStatusSchema>;
export type RunStatusKind = RunStatus["kind"];

export function isTerminal(status: RunStatus): boolean {
  return status.kind === "exited" || status.kind === "failed" || status.kind === "stopped";
}

export const RunPhaseSchema = v.picklist(["build", "provision", "boot"]);
export type RunPhase = v.InferOutput<typeof RunPhaseSchema>;

export const ReachabilityStateSchema = v.picklist(["checking", "reachable", "unreachable"]);
export type ReachabilityState = v.InferOutput<typeof ReachabilityStateSchema>;

export const RunTriggerSchema = v.picklist(["initial", "watch", "manual", "resume"]);
export type RunTrigger = v.InferOutput<typeof RunTriggerSchema>;

export const ByteStreamTagSchema = v.picklist(["tty", "stdout", "stderr"]);
export type ByteStreamTag = v.InferOutput<typeof ByteStreamTagSchema>;

/** A kernel debug frame, relayed unchanged (docs/api.md "Debug and port events"). */
export const DebugFrameSchema = v.looseObject({
  kind: v.optional(v.string()),
  timestamp: v.optional(v.string()),
  event: v.optional(v.string()),
  payload: v.optional(v.unknown()),
});
export type DebugFrame = v.InferOutput<typeof DebugFrameSchema>;

/** Frames whose kind is neither `log` nor `record` are event frames: the only ones relayed. */
export function isEventFrame(frame: DebugFrame): boolean {
  return frame.kind !== "log" && frame.kind !== "record";
}

export const EndpointChangeSchema = v.object({
  added: v.optional(v.array(RunnerEndpointSchema)),
  removed: v.optional(v.array(RunnerEndpointSchema)),
  rejected: v.optional(v.array(v.object({ port: v.number(), reason: v.string() }))),
});
export type EndpointChange = v.InferOutput<typeof EndpointChangeSchema>;

export const StatusEventSchema = v.object({ type: v.literal("status"), status: RunStatusSchema });
export const ProgressEventSchema = v.object({
  type: v.literal("progress"),
  app: v.optional(v.string()),
  phase: RunPhaseSchema,
  message: v.string(),
  done: v.optional(v.boolean()),
});
export const DebugEventSchema = v.object({ type: v.literal("debug"), app: v.string(), frame: DebugFrameSchema });
export const ReachabilityEventSchema = v.object({
  type: v.literal("reachability"),
  app: v.string(),
  port: v.number(),
  state: ReachabilityStateSchema,
});
export const EndpointsEventSchema = v.object({ type: v.literal("endpoints"), app: v.string(), ...EndpointChangeSchema.entries });

/** Where the routing layer stands on one routed port (docs/events-and-tokens.md). */
export const RouteStateSchema = v.picklist(["pending", "programmed", "unprogrammed"]);
export type RouteState = v.InferOutput<typeof RouteStateSchema>;

/** A routed port's state; `app` is absent for the agent's port. */
export const RouteEventSchema = v.object({
  type: v.literal("route"),
  app: v.optional(v.string()),
  host: v.string(),
  port: v.number(),
  state: RouteStateSchema,
  reason: v.optional(v.string()),
});
export type RouteEvent = v.InferOutput<typeof RouteEventSchema>;

export const RunEventSchema = v.union([
  StatusEventSchema,
  ProgressEventSchema,
  DebugEventSchema,
  ReachabilityEventSchema,
  v.object({
    type: v.literal("run"),
    app: v.string(),
    generation: v.number(),
    phase: v.literal("started"),
    trigger: RunTriggerSchema,
    /** The version the kernel's `Kernel.Starting` frame reported, unjudged; absent when it reported none. */
    telo: v.optional(v.string()),
  }),
  v.object({
    type: v.literal("run"),
    app: v.string(),
    generation: v.number(),
    phase: v.literal("completed"),
    code: v.number(),
    durationMs: v.optional(v.number()),
  }),
  v.object({
    type: v.literal("run"),
    app: v.string(),
    generation: v.number(),
    phase: v.literal("failed"),
    reason: v.string(),
  }),
  EndpointsEventSchema,
  RouteEventSchema,
]);
export type RunEvent = v.InferOutput<typeof RunEventSchema>;

export const AvailabilityReportSchema = v.variant("status", [
  v.object({ status: v.literal("ready") }),
  v.object({
    status: v.literal("needs-setup"),
    issues: v.array(v.object({ path: v.string(), message: v.string() })),
  }),
  v.object({
    status: v.literal("unavailable"),
    message: v.string(),
    remediation: v.optional(v.string()),
  }),
]);
export type AvailabilityReport = v.InferOutput<typeof AvailabilityReportSchema>;

export const WorkspaceTreeSchema = v.object({
  files: v.array(v.object({ path: v.string(), hash: v.string() })),
});
export type WorkspaceTree = v.InferOutput<typeof WorkspaceTreeSchema>;

export const WorkspaceChangeSetSchema = v.object({
  write: v.optional(
    v.array(
      v.object({
        path: v.pipe(v.string(), v.minLength(1)),
        content: v.string(),
        encoding: v.optional(v.picklist(["utf8", "base64"])),
      }),
    ),
  ),
  delete: v.optional(v.array(v.pipe(v.string(), v.minLength(1)))),
});
export type WorkspaceChangeSet = v.InferOutput<typeof WorkspaceChangeSetSchema>;

export const WorkspaceApplyResultSchema = v.object({ written: v.number(), deleted: v.number() });
export type WorkspaceApplyResult = v.InferOutput<typeof WorkspaceApplyResultSchema>;

export const WorkspaceFileSchema = v.object({ content: v.string(), size: v.number() });
export type WorkspaceFile = v.InferOutput<typeof WorkspaceFileSchema>;

export const CheckpointFileSchema = v.object({
  path: v.string(),
  hash: v.string(),
  content: v.string(),
  encoding: v.picklist(["utf8", "base64"]),
});
export type CheckpointFile = v.InferOutput<typeof CheckpointFileSchema>;

export const WorkspaceSnapshotSchema = v.object({ files: v.array(CheckpointFileSchema) });
export type WorkspaceSnapshot = v.InferOutput<typeof WorkspaceSnapshotSchema>;

export const CreatedSessionSchema = v.object({
  sessionId: v.string(),
  streamUrl: v.string(),
  createdAt: v.string(),
});
export type CreatedSession = v.InferOutput<typeof CreatedSessionSchema>;

/**
 * The stages of a session's start, and the ends of its runs, as the runner saw them
 * (docs/api.md "The timeline"). Each start stage appears at most once.
 */
export const TimelineStageSchema = v.picklist([
  "admitted",
  "scheduled",
  "image-pulled",
  "warm-claimed",
  "bundle-delivered",
  "container-started",
  "kernel-running",
  "running",
  "completed",
  "failed",
]);
export type TimelineStage = v.InferOutput<typeof TimelineStageSchema>;

/** At most this many entries: every start stage once, then the latest run ends and failures. */
export const TIMELINE_MAX_ENTRIES = 24;

export const TimelineEntrySchema = v.object({
  stage: TimelineStageSchema,
  /** ISO 8601; the cluster's clock for what the pod's status dates, the runner's for the rest. */
  at: v.string(),
  detail: v.optional(v.pipe(v.string(), v.maxLength(500))),
});
export type TimelineEntry = v.InferOutput<typeof TimelineEntrySchema>;

export const SessionDocumentSchema = v.object({
  sessionId: v.string(),
  status: RunStatusSchema,
  mode: SessionModeSchema,
  agent: v.optional(v.string()),
  apps: v.array(
    v.object({
      name: v.string(),
      io: IoModeSchema,
      generation: v.number(),
      ports: v.array(PortMappingSchema),
      /** The Telo version the app was started on, when the request named one (docs/telo-versions.md). */
      telo: v.optional(v.string()),
    }),
  ),
  createdAt: v.string(),
  exitedAt: v.optional(v.string()),
  timeline: v.pipe(v.array(TimelineEntrySchema), v.maxLength(TIMELINE_MAX_ENTRIES)),
});
export type SessionDocument = v.InferOutput<typeof SessionDocumentSchema>;

/** The core's error body (docs/api.md "Error bodies"). */
export const ErrorBodySchema = v.object({ error: v.string(), message: v.string() });

/** A refused Telo version: which app named it, the version, and why (docs/telo-versions.md). */
export const TeloVersionUnavailableSchema = v.object({
  error: v.literal("telo_version_unavailable"),
  message: v.string(),
  app: v.string(),
  version: v.string(),
  reason: v.string(),
});
export type ErrorBody = v.InferOutput<typeof ErrorBodySchema>;

export const TermsSchema = v.object({ version: v.string(), title: v.string(), body: v.string() });
export type Terms = v.InferOutput<typeof TermsSchema>;
