/**
 * Session admission (docs/api.md "Creating a session"): everything between a schema-valid request and a
 * registered session, in the contract's order, as pure functions of the request and a
 * snapshot of the runner's state. Capacity (step 10) is the registry's. A refusal is raised as
 * a Problem. The config gate and the Telo-version refusals, and their order: docs/telo-versions.md.
 * The plan it returns is the session's launch description as the backend starts it.
 */
import type { AppsCatalog, CatalogEntry } from "../config/apps-catalog.ts";
import { coResidentAgentNames } from "../config/apps-catalog.ts";
import { Problem } from "../contract/problem.ts";
import type { AppSessionBody, CreateSessionBody } from "../contract/requests.ts";
import { invalidPathMessage, normaliseRelativePath } from "../contract/paths.ts";
import { parseSessionConfig, type SessionConfig } from "../contract/session-config.ts";
import {
  DEFAULT_APP_NAME,
  type IoMode,
  type PortMapping,
  type ResolvedApp,
  type RunBundle,
  type Terms,
} from "../contract/wire.ts";
import type { StartSpec } from "./backend-seam.ts";
import { checkAvailable, requestedVersions, type SupplyTelo } from "./telo-gate.ts";
import type { WorkloadToken } from "./workload-token.ts";

export type AdmissionContext = {
  /** The id and creation time the admitted session gets: the plan is its launch description. */
  sessionId: string;
  now: Date;
  terms: Terms | undefined;
  catalog: AppsCatalog;
  watchEnabled: boolean;
  watchMaxSessions: number;
  liveWatchSessions: number;
  defaultRegistryUrl: string | undefined;
  /** The backend's io modes (`features.io`), the first being an app's default. */
  io: readonly IoMode[];
  validateConfig: ((config: SessionConfig) => string | undefined) | undefined;
  validateAppName: ((name: string) => string | undefined) | undefined;
  /** Undefined when the backend runs no named Telo versions. */
  supplyTelo: SupplyTelo | undefined;
  /** A fresh workload token, asked for only when a catalog entry names a `tokenEnv`. */
  mintToken: () => string;
};

/** What app resolution checks beyond the contract's own rules. */
export type AppRules = Pick<AdmissionContext, "io" | "validateAppName">;

/** The terms gate (docs/api.md "Terms"): the header must equal the version exactly. */
export function termsGate(terms: Terms | undefined, acceptedTerms: string | undefined): void {
  if (!terms || acceptedTerms === terms.version) return;
  throw new Problem("terms_required", "terms_required", "the usage terms must be accepted", { terms });
}

export function planSession(body: CreateSessionBody, acceptedTerms: string | undefined, context: AdmissionContext): StartSpec {
  termsGate(context.terms, acceptedTerms);

  const bundle = normaliseBundle(body.bundle);
  const versions = requestedVersions(body.apps, body.telo, context.supplyTelo);
  const config = configGate(body.config, versions.some((version) => version !== undefined));
  checkAvailable(body.apps, versions, context.supplyTelo);
  const backendRefusal = context.validateConfig?.(config);
  if (backendRefusal !== undefined) throw new Problem("invalid", "invalid_config", backendRefusal);

  const mode = body.mode;
  if (mode === "watch" && !context.watchEnabled) {
    throw new Problem("invalid", "watch_disabled", "this runner does not offer watch sessions (see /v1/capabilities)");
  }
  let agent = body.agent === undefined ? undefined : agentEntry(body.agent, mode, context.catalog);
  if (mode === "watch" && context.liveWatchSessions >= context.watchMaxSessions) {
    throw new Problem("conflict", "too_many_watch_sessions",
      `runner is at its configured max of ${context.watchMaxSessions} concurrent watch sessions`,
    );
  }

  const apps = body.apps
    ? resolveApps(body.apps, context)
    : [{ name: DEFAULT_APP_NAME, entryRelativePath: bundle.entryRelativePath, ports: body.ports ?? [], io: context.io[0] ?? "tty" }];
  for (const [index, version] of versions.entries()) if (version !== undefined) apps[index]!.telo = version;

  let notice: string | undefined;
  if (agent?.port !== undefined) {
    const clash = apps.find((app) => app.ports.some((port) => port.protocol === "tcp" && port.port === agent?.port));
    if (clash) {
      notice = `co-resident agent '${agent.name}' was not started: it listens on tcp port ${agent.port}, which app '${clash.name}' declares`;
      agent = undefined;
    }
  }

  return {
    sessionId: context.sessionId,
    createdAt: context.now.toISOString(),
    mode,
    apps,
    ...(agent && { agent }),
    ...(agent?.tokenEnv !== undefined && { token: workloadToken(agent.tokenEnv, "agent", context) }),
    ...(notice !== undefined && { notice }),
    env: workloadEnv(body.env, typeof config.registryUrl === "string" ? config.registryUrl : undefined, context.defaultRegistryUrl),
    config,
    bundle,
    inspect: mode === "watch" ? true : body.inspect,
    selfContained: false,
  };
}

/**
 * The config gate, unconditional: the known keys' shapes, then neither of the keys a version
 * supersedes beside a version (the version chooses the kernel image and its pull policy).
 */
function configGate(input: Record<string, unknown>, versionNamed: boolean): SessionConfig {
  const parsed = parseSessionConfig(input);
  if ("refusal" in parsed) throw new Problem("invalid", "invalid_config", parsed.refusal);
  const superseded = (["image", "pullPolicy"] as const).find((key) => parsed.config[key] !== undefined);
  if (versionNamed && superseded !== undefined) {
    throw new Problem("invalid", "invalid_config",
      `\`config.${superseded}\` cannot be given beside a telo version: the version chooses the kernel image and its pull policy (see config.supersededByTelo in /v1/capabilities)`,
    );
  }
  return parsed.config;
}

function agentEntry(name: string, mode: CreateSessionBody["mode"], catalog: AppsCatalog): CatalogEntry {
  if (mode !== "watch") {
    throw new Problem("invalid", "agent_requires_watch", "a co-resident agent is only available in a watch session (mode \"watch\")");
  }
  const agent = catalog.get(name);
  if (!agent) {
    const offered = coResidentAgentNames(catalog);
    const suffix = offered.length > 0 ? ` — offered: ${offered.join(", ")}` : "";
    throw new Problem("invalid", "unknown_agent", `agent '${name}' is not offered by this runner${suffix}`);
  }
  if (agent.port === undefined) {
    throw new Problem("invalid", "agent_port_undeclared",
      `agent '${agent.name}' declares no port, so this runner cannot route it — set RUNNER_APPS.${agent.name}.port to the port its image listens on`,
    );
  }
  return agent;
}

/** `POST /v1/apps/:name/sessions` (docs/api.md "Apps door"): the unknown-app check comes before the terms gate. */
export function planAppSession(
  name: string,
  body: AppSessionBody,
  acceptedTerms: string | undefined,
  context: AdmissionContext,
): StartSpec {
  const entry = context.catalog.get(name);
  if (!entry) {
    const names = [...context.catalog.keys()];
    const tail =
      names.length > 0
        ? ` — offered apps: ${names.join(", ")} (see /v1/capabilities).`
        : " — it offers no predefined applications (see /v1/capabilities).";
    throw new Problem("not_found", "unknown_app", `app '${name}' is not offered by this runner${tail}`);
  }
  termsGate(context.terms, acceptedTerms);

  // Operator values win: client values for the operator's keys are dropped, not merged. The
  // token's name is the operator's too: it never travels as a plain value.
  const clientEnv = Object.fromEntries(
    Object.entries(body.env ?? {}).filter(([key]) => !Object.hasOwn(entry.env, key)),
  );
  const env = workloadEnv({ ...clientEnv, ...entry.env }, undefined, context.defaultRegistryUrl);
  if (entry.tokenEnv !== undefined) delete env[entry.tokenEnv];
  return {
    sessionId: context.sessionId,
    createdAt: context.now.toISOString(),
    mode: "run",
    apps: [{ name: DEFAULT_APP_NAME, entryRelativePath: "", ports: body.ports ?? [], io: "tty" }],
    env,
    ...(entry.tokenEnv !== undefined && { token: workloadToken(entry.tokenEnv, "app", context) }),
    config: { image: entry.image, pullPolicy: entry.pullPolicy },
    bundle: { entryRelativePath: "", files: [] },
    inspect: body.inspect,
    selfContained: true,
  };
}

function workloadToken(env: string, holder: WorkloadToken["holder"], context: AdmissionContext): WorkloadToken {
  return { env, value: context.mintToken(), holder };
}

/**
 * App resolution: names, reserved names, duplicates, entries, io, session-wide ports.
 * An io the backend does not offer is refused, never downgraded; no io takes its first mode.
 */
export function resolveApps(
  specs: { name: string; entryRelativePath: string; ports?: PortMapping[]; io?: IoMode }[],
  rules: AppRules,
): ResolvedApp[] {
  const { validateAppName } = rules;
  const resolved: ResolvedApp[] = [];
  const portOwners = new Map<string, string>();
  for (const spec of specs) {
    if (!/^[a-z0-9]([a-z0-9-]*[a-z0-9])?$/.test(spec.name)) {
      throw new Problem("invalid", "invalid_app_name", `app name '${spec.name}' must be a DNS label (lowercase alphanumeric and '-')`);
    }
    const backendRefusal = validateAppName?.(spec.name);
    if (backendRefusal !== undefined) throw new Problem("invalid", "invalid_app_name", backendRefusal);
    if (spec.name === "workspace" || spec.name === "agent") {
      throw new Problem("invalid", "reserved_app_name", `app name '${spec.name}' is reserved by the runner`);
    }
    if (resolved.some((app) => app.name === spec.name)) {
      throw new Problem("invalid", "duplicate_app_name", `app '${spec.name}' is declared twice`);
    }
    const entry = normaliseRelativePath(spec.entryRelativePath);
    if (entry === undefined) throw new Problem("invalid", "invalid_bundle", invalidPathMessage(spec.entryRelativePath));
    if (spec.io !== undefined && !rules.io.includes(spec.io)) {
      throw new Problem("invalid", "io_unsupported", `app '${spec.name}' asks for io '${spec.io}', which this runner does not offer (features.io: ${rules.io.join(", ")})`);
    }
    for (const port of spec.ports ?? []) {
      const key = `${port.protocol}/${port.port}`;
      const owner = portOwners.get(key);
      if (owner !== undefined) {
        throw new Problem("invalid", "port_conflict",
          `apps '${owner}' and '${spec.name}' both declare ${port.protocol} port ${port.port}; session hosts carry no app name, so the two would be indistinguishable`,
        );
      }
      portOwners.set(key, spec.name);
    }
    resolved.push({ name: spec.name, entryRelativePath: entry, ports: [...(spec.ports ?? [])], io: spec.io ?? rules.io[0] ?? "tty" });
  }
  return resolved;
}

/**
 * A watch session's new app set (`PUT /apps`): resolved as at creation, the Telo-version
 * refusals included, against the config the session was created with.
 */
export function resolveAppSet(specs: CreateSessionBody["apps"] & {}, rules: AppRules & Pick<AdmissionContext, "supplyTelo">, config: SessionConfig): ResolvedApp[] {
  const versions = requestedVersions(specs, undefined, rules.supplyTelo);
  configGate(config, versions.some((version) => version !== undefined));
  checkAvailable(specs, versions, rules.supplyTelo);
  const apps = resolveApps(specs, rules);
  for (const [index, version] of versions.entries()) if (version !== undefined) apps[index]!.telo = version;
  return apps;
}

/**
 * The workload's env (docs/api.md "Creating a session"): TELO_REGISTRY_URL from the body's env, else the config's
 * registryUrl, else the runner's default; TELO_CACHE_DIR never passes.
 */
export function workloadEnv(
  env: Record<string, string>,
  configRegistryUrl: string | undefined,
  runnerDefault: string | undefined,
): Record<string, string> {
  const result: Record<string, string> = { ...env };
  if (!Object.hasOwn(result, "TELO_REGISTRY_URL")) {
    const registryUrl = configRegistryUrl?.trim() || runnerDefault;
    if (registryUrl) result.TELO_REGISTRY_URL = registryUrl;
  }
  delete result.TELO_CACHE_DIR;
  return result;
}

function normaliseBundle(bundle: CreateSessionBody["bundle"]): RunBundle {
  const entry = normaliseRelativePath(bundle.entryRelativePath);
  if (entry === undefined) throw new Problem("invalid", "invalid_bundle", invalidPathMessage(bundle.entryRelativePath));
  const files = [];
  for (const file of bundle.files) {
    const relativePath = normaliseRelativePath(file.relativePath);
    if (relativePath === undefined) throw new Problem("invalid", "invalid_bundle", invalidPathMessage(file.relativePath));
    files.push({ ...file, relativePath });
  }
  return { entryRelativePath: entry, files };
}
