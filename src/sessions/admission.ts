/**
 * Session admission (docs/api.md "Creating a session"): everything between a schema-valid request and a
 * registered session, in the contract's order, as pure functions of the request and a
 * snapshot of the runner's state. Capacity (step 10) is the registry's. A refusal is raised as
 * a Problem.
 */
import type { AppsCatalog, CatalogEntry } from "../config/apps-catalog.ts";
import { coResidentAgentNames } from "../config/apps-catalog.ts";
import { Problem } from "../contract/problem.ts";
import type { AppSessionBody, CreateSessionBody } from "../contract/requests.ts";
import { invalidPathMessage, normaliseRelativePath } from "../contract/paths.ts";
import {
  DEFAULT_APP_NAME,
  type PortMapping,
  type ResolvedApp,
  type RunBundle,
  type SessionMode,
  type Terms,
} from "../contract/wire.ts";

export type SessionPlan = {
  mode: SessionMode;
  apps: ResolvedApp[];
  agent: CatalogEntry | undefined;
  /** A notice for the stream's first event (the dropped agent, docs/api.md "Agents"). */
  notice: string | undefined;
  env: Record<string, string>;
  config: Record<string, unknown> & { image: string; pullPolicy: string };
  bundle: RunBundle;
  inspect: boolean;
  selfContained: boolean;
};

export type AdmissionContext = {
  terms: Terms | undefined;
  catalog: AppsCatalog;
  watchEnabled: boolean;
  watchMaxSessions: number;
  liveWatchSessions: number;
  defaultRegistryUrl: string | undefined;
  validateConfig: ((config: SessionPlan["config"]) => string | undefined) | undefined;
  validateAppName: ((name: string) => string | undefined) | undefined;
};

/** The terms gate (docs/api.md "Terms"): the header must equal the version exactly. */
export function termsGate(terms: Terms | undefined, acceptedTerms: string | undefined): void {
  if (!terms || acceptedTerms === terms.version) return;
  throw new Problem("terms_required", "terms_required", "the usage terms must be accepted", { terms });
}

export function planSession(
  body: CreateSessionBody,
  acceptedTerms: string | undefined,
  context: AdmissionContext,
): SessionPlan {
  termsGate(context.terms, acceptedTerms);

  const bundle = normaliseBundle(body.bundle);

  const configRefusal = context.validateConfig?.(body.config);
  if (configRefusal !== undefined) throw new Problem("invalid", "invalid_config", configRefusal);

  const mode = body.mode;
  if (mode === "watch" && !context.watchEnabled) {
    throw new Problem("invalid", "watch_disabled", "this runner does not offer watch sessions (see /v1/capabilities)");
  }

  let agent: CatalogEntry | undefined;
  if (body.agent !== undefined) {
    if (mode !== "watch") {
      throw new Problem("invalid", "agent_requires_watch", "a co-resident agent is only available in a watch session (mode \"watch\")");
    }
    agent = context.catalog.get(body.agent);
    if (!agent) {
      const offered = coResidentAgentNames(context.catalog);
      const suffix = offered.length > 0 ? ` — offered: ${offered.join(", ")}` : "";
      throw new Problem("invalid", "unknown_agent", `agent '${body.agent}' is not offered by this runner${suffix}`);
    }
    if (agent.port === undefined) {
      throw new Problem("invalid", "agent_port_undeclared",
        `agent '${agent.name}' declares no port, so this runner cannot route it — set RUNNER_APPS.${agent.name}.port to the port its image listens on`,
      );
    }
  }

  if (mode === "watch" && context.liveWatchSessions >= context.watchMaxSessions) {
    throw new Problem("conflict", "too_many_watch_sessions",
      `runner is at its configured max of ${context.watchMaxSessions} concurrent watch sessions`,
    );
  }

  const apps = body.apps
    ? resolveApps(body.apps, context.validateAppName)
    : [{ name: DEFAULT_APP_NAME, entryRelativePath: bundle.entryRelativePath, ports: body.ports ?? [], io: "tty" as const }];

  let notice: string | undefined;
  if (agent?.port !== undefined) {
    const clash = apps.find((app) => app.ports.some((port) => port.protocol === "tcp" && port.port === agent?.port));
    if (clash) {
      notice = `co-resident agent '${agent.name}' was not started: it listens on tcp port ${agent.port}, which app '${clash.name}' declares`;
      agent = undefined;
    }
  }

  return {
    mode,
    apps,
    agent,
    notice,
    env: workloadEnv(body.env, body.config.registryUrl, context.defaultRegistryUrl),
    config: body.config,
    bundle,
    inspect: mode === "watch" ? true : body.inspect,
    selfContained: false,
  };
}

/** `POST /v1/apps/:name/sessions` (docs/api.md "Apps door"): the unknown-app check comes before the terms gate. */
export function planAppSession(
  name: string,
  body: AppSessionBody,
  acceptedTerms: string | undefined,
  context: AdmissionContext,
): SessionPlan {
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

  // Operator values win: client values for the operator's keys are dropped, not merged.
  const clientEnv = Object.fromEntries(
    Object.entries(body.env ?? {}).filter(([key]) => !Object.hasOwn(entry.env, key)),
  );
  return {
    mode: "run",
    apps: [{ name: DEFAULT_APP_NAME, entryRelativePath: "", ports: body.ports ?? [], io: "tty" }],
    agent: undefined,
    notice: undefined,
    env: workloadEnv({ ...clientEnv, ...entry.env }, undefined, context.defaultRegistryUrl),
    config: { image: entry.image, pullPolicy: entry.pullPolicy },
    bundle: { entryRelativePath: "", files: [] },
    inspect: body.inspect,
    selfContained: true,
  };
}

/** App resolution (docs/api.md "Creating a session"): names, reserved names, duplicates, entries, session-wide ports. */
export function resolveApps(
  specs: { name: string; entryRelativePath: string; ports?: PortMapping[]; io?: "tty" | "streams" }[],
  validateAppName?: (name: string) => string | undefined,
): ResolvedApp[] {
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
    resolved.push({ name: spec.name, entryRelativePath: entry, ports: [...(spec.ports ?? [])], io: spec.io ?? "tty" });
  }
  return resolved;
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
