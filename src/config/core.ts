/**
 * The core's configuration (docs/operating.md "Core variables"): the variables both processes read. The backend
 * adds its own (src/config/kube.ts).
 */
import { tmpdir } from "node:os";
import { join } from "node:path";
import * as v from "valibot";
import { accessConfig, accessEnvEntries } from "./access.ts";
import { parseAppsCatalog } from "./apps-catalog.ts";
import { LOG_LEVELS } from "../log.ts";
import { booleanVar, parseEnv, picklistVar, portVar, positiveIntVar, stringVar } from "./env-values.ts";
import { peerConfig, peerEnvEntries } from "./peer.ts";
import { replicaEnvEntries, replicaVars } from "./replicas.ts";
import { loadTerms } from "./terms.ts";

export const DEFAULT_PORT = 8062;

export const coreEnvSchema = v.object({
  PORT: portVar("PORT", DEFAULT_PORT),
  LOG_LEVEL: picklistVar("LOG_LEVEL", LOG_LEVELS, "info"),
  RUNNER_MAX_SESSIONS: positiveIntVar("RUNNER_MAX_SESSIONS", 32),
  RUNNER_EXIT_TTL_MS: positiveIntVar("RUNNER_EXIT_TTL_MS", 14_400_000),
  RUNNER_REPLAY_BUFFER_BYTES: positiveIntVar("RUNNER_REPLAY_BUFFER_BYTES", 5_000_000),
  RUNNER_CORS_ORIGINS: stringVar("*"),
  RUNNER_WATCH_SESSIONS: booleanVar("RUNNER_WATCH_SESSIONS", false),
  RUNNER_WATCH_IDLE_SECONDS: positiveIntVar("RUNNER_WATCH_IDLE_SECONDS", 300),
  RUNNER_WATCH_MAX_TTL_SECONDS: positiveIntVar("RUNNER_WATCH_MAX_TTL_SECONDS", 21_600),
  RUNNER_WATCH_MAX_SESSIONS: positiveIntVar("RUNNER_WATCH_MAX_SESSIONS", 8),
  RUNNER_WATCH_RELOAD_LIMIT: positiveIntVar("RUNNER_WATCH_RELOAD_LIMIT", 30),
  RUNNER_WATCH_SUSPENDED_TTL_SECONDS: positiveIntVar("RUNNER_WATCH_SUSPENDED_TTL_SECONDS", 86_400),
  RUNNER_WORKSPACE_CHECKPOINT_SECONDS: positiveIntVar("RUNNER_WORKSPACE_CHECKPOINT_SECONDS", 30),
  RUNNER_APPS: stringVar(undefined),
  RUNNER_TERMS_FILE: stringVar(undefined),
  RUNNER_TERMS_BODY: v.optional(v.string(), () => undefined),
  RUNNER_TERMS_VERSION: stringVar(undefined),
  RUNNER_TERMS_TITLE: stringVar(undefined),
  TELO_REGISTRY_URL: stringVar(undefined),
  // Where the api process reaches the supervisor (mode 0600 Unix socket).
  RUNNER_INTERNAL_SOCKET: stringVar(undefined),
  // The api hands terminals' client sockets to the supervisor beside it (docs/relay.md "The handoff").
  RUNNER_TERMINAL_HANDOFF: booleanVar("RUNNER_TERMINAL_HANDOFF", true),
  ...accessEnvEntries,
  ...peerEnvEntries,
  // Several replicas (docs/replicas.md): unset RUNNER_REPLICA_ID = a single replica.
  ...replicaEnvEntries,
});

export type CoreConfig = ReturnType<typeof loadCoreConfig>;

/**
 * One socket per api port, so two runners on one machine (different ports) never meet on the
 * internal socket; the directory is private to the user (src/internal/socket-path.ts checks it).
 */
export function defaultInternalSocketPath(port: number): string {
  return join(tmpdir(), `k8s-runner-${process.getuid?.() ?? "user"}`, `supervisor-${port}.sock`);
}

export function parseCorsOrigins(raw: string): string[] | undefined {
  if (raw === "*") return undefined;
  const origins = raw.split(",").map((origin) => origin.trim()).filter((origin) => origin !== "");
  return origins.length === 0 || origins.includes("*") ? undefined : origins;
}

export function loadCoreConfig(env: NodeJS.ProcessEnv) {
  const vars = parseEnv(coreEnvSchema, env);
  return {
    port: vars.PORT,
    /** PORT unset: `npm start` may take a free port instead when 8062 is taken. */
    portIsDefault: env.PORT === undefined,
    logLevel: vars.LOG_LEVEL,
    maxSessions: vars.RUNNER_MAX_SESSIONS,
    exitTtlMs: vars.RUNNER_EXIT_TTL_MS,
    replayBufferBytes: vars.RUNNER_REPLAY_BUFFER_BYTES,
    /** undefined = any origin (`*`). */
    corsOrigins: parseCorsOrigins(vars.RUNNER_CORS_ORIGINS),
    watch: {
      enabled: vars.RUNNER_WATCH_SESSIONS,
      idleMs: vars.RUNNER_WATCH_IDLE_SECONDS * 1000,
      maxTtlSeconds: vars.RUNNER_WATCH_MAX_TTL_SECONDS,
      maxSessions: vars.RUNNER_WATCH_MAX_SESSIONS,
      reloadLimit: vars.RUNNER_WATCH_RELOAD_LIMIT,
      suspendedTtlMs: vars.RUNNER_WATCH_SUSPENDED_TTL_SECONDS * 1000,
      checkpointMs: vars.RUNNER_WORKSPACE_CHECKPOINT_SECONDS * 1000,
    },
    apps: parseAppsCatalog(vars.RUNNER_APPS),
    terms: loadTerms(vars, vars.RUNNER_TERMS_BODY),
    defaultRegistryUrl: vars.TELO_REGISTRY_URL,
    internalSocketPath: vars.RUNNER_INTERNAL_SOCKET ?? defaultInternalSocketPath(vars.PORT),
    /** The default lives under the shared $TMPDIR: its directory must be private (checked at start). */
    internalSocketIsDefault: vars.RUNNER_INTERNAL_SOCKET === undefined,
    terminalHandoff: vars.RUNNER_TERMINAL_HANDOFF,
    access: accessConfig(vars),
    peer: peerConfig(vars),
    /** Checked against the peer settings and the warm pool at the supervisor's startup (`replicaSettings`). */
    replicas: replicaVars(vars),
  };
}
