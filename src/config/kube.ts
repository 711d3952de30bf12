/**
 * Configuration of the Kubernetes backend (docs/operating.md "Kubernetes backend variables", "Configuration"): every variable this
 * backend reads, keyed by name, plus the cross-variable startup refusals. Core variables (PORT,
 * RUNNER_MAX_SESSIONS, the watch set, terms, RUNNER_APPS, …) belong to the core config.
 */
import { isIP } from "node:net";
import * as v from "valibot";
import { TELO_VERSION_PATTERN } from "../contract/telo-version.ts";
import { PullPolicySchema } from "../contract/wire.ts";
import {
  booleanVar,
  ConfigError,
  parseEnv,
  picklistVar,
  portVar,
  positiveIntVar,
  regexVar,
  stringVar,
} from "./env-values.ts";
import { DEFAULT_OWNER_ID } from "./owner.ts";

const ROUTING_MODES = ["auto", "ingress", "gateway", "none"] as const;

const withoutTrailingSlashes = v.transform((value: string | undefined) => value?.replace(/\/+$/, ""));

/** A URL or repository whose trailing `/`s are stripped; unset or blank → undefined. */
const baseVar = v.pipe(stringVar(undefined), withoutTrailingSlashes);

/**
 * `http://$(POD_IP):8063` in a pod spec is no URL on an IPv6 pod network (the address needs
 * brackets, and the spec cannot add them only there): an unbracketed IPv6 host before the port
 * is bracketed.
 */
export function bracketIpv6Host(url: string): string {
  const match = /^(https?:\/\/)([0-9a-fA-F:.]*:[0-9a-fA-F:.]*):(\d{1,5})(\/.*)?$/.exec(url);
  if (!match || isIP(match[2]!) !== 6) return url;
  return `${match[1]}[${match[2]}]:${match[3]}${match[4] ?? ""}`;
}

const selfUrlVar = v.pipe(
  baseVar,
  v.transform((value) => (value === undefined ? undefined : bracketIpv6Host(value))),
  v.check(
    (value) => value === undefined || (URL.canParse(value) && /^https?:$/.test(new URL(value).protocol)),
    (issue) => `RUNNER_SELF_URL must be an http(s) URL the session pods can reach (e.g. http://k8s-runner.telo-runner.svc:8063), got '${String(issue.input)}'.`,
  ),
);

const routingModeVar = v.pipe(
  stringVar("auto"),
  v.picklist(
    ROUTING_MODES,
    (issue) => `SESSION_ROUTING_MODE must be one of ${ROUTING_MODES.join(" | ")} (got '${String(issue.input)}').`,
  ),
);

/** The apiserver's quantity grammar: a number with a binary, decimal or exponent suffix. */
const KUBERNETES_QUANTITY = /^\+?(\d+(\.\d*)?|\.\d+)(Ki|Mi|Gi|Ti|Pi|Ei|[numkMGTPE]|[eE][+-]?\d+)?$/;

/**
 * A resource ceiling. Checked at boot so that a typo stops the runner with a clear sentence
 * instead of every session pod being refused by the apiserver (422).
 */
function quantityVar(name: string, fallback: string, examples: string) {
  return v.pipe(
    stringVar(fallback),
    v.check(
      (quantity) => KUBERNETES_QUANTITY.test(quantity) && /[1-9]/.test(quantity.replace(/[eE][+-]?\d+$/, "")),
      (issue) => `${name} must be a positive Kubernetes quantity (e.g. ${examples}), got '${String(issue.input)}'.`,
    ),
  );
}

/** A count where 0 means off: a non-negative integer; unset or blank → 0. */
function countVar(name: string) {
  return v.pipe(
    stringVar("0"),
    v.check((text) => /^\d+$/.test(text) && Number.isSafeInteger(Number(text)), (issue) => `${name} must be a non-negative integer, got '${String(issue.input)}'.`),
    v.transform(Number),
  );
}

/** An image repository without tag or digest: an optional registry host (and port), then path components. */
const IMAGE_REPOSITORY = /^([A-Za-z0-9.-]+(:\d+)?\/)?[a-z0-9]+([._-]+[a-z0-9]+)*(\/[a-z0-9]+([._-]+[a-z0-9]+)*)*$/;

function imageRepositoryVar(name: string, fallback: string) {
  return v.pipe(
    stringVar(fallback),
    v.regex(IMAGE_REPOSITORY, (issue) => `${name} must be an image repository without tag or digest (e.g. telorun/node), got '${String(issue.input)}'.`),
  );
}

/** A Telo version (MAJOR.MINOR.PATCH[-prerelease][+build]); unset or blank → `fallback`. */
function teloVersionVar<const D extends string | undefined>(name: string, fallback: D) {
  return v.pipe(
    stringVar(fallback),
    v.check(
      (version) => version === undefined || TELO_VERSION_PATTERN.test(version),
      (issue) => `${name} must be a Telo version such as 0.96.0, got '${String(issue.input)}'.`,
    ),
  );
}

const DNS_LABEL = /^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$/;
const LABEL_VALUE = /^[A-Za-z0-9]([-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?$/;

/** A namespace name (RFC 1123 label), checked at boot for the same reason as the quantities. */
function namespaceVar<const D extends string | undefined>(name: string, fallback: D) {
  return v.pipe(
    stringVar(fallback),
    v.check(
      (namespace) => namespace === undefined || DNS_LABEL.test(namespace),
      (issue) => `${name} must be a Kubernetes namespace name (lowercase RFC 1123 label), got '${String(issue.input)}'.`,
    ),
  );
}

export const kubeEnvSchema = v.object({
  RUNNER_SELF_URL: selfUrlVar,
  RUNNER_BUNDLE_PORT: portVar("RUNNER_BUNDLE_PORT", 8063),
  // Set by `npm start` when it runs the embedded simulated cluster: a session's
  // `config.simulate` then becomes the sim's behaviour annotations on its pods.
  RUNNER_SIMULATED_CLUSTER: booleanVar("RUNNER_SIMULATED_CLUSTER", false),
  // How long a run pod may stay Pending (image pull, scheduling) before its start fails.
  RUNNER_START_DEADLINE_SECONDS: positiveIntVar("RUNNER_START_DEADLINE_SECONDS", 120),
  RUNNER_SESSION_NAMESPACE: namespaceVar("RUNNER_SESSION_NAMESPACE", "telo-sessions"),
  RUNNER_MANAGED_BY: v.pipe(
    stringVar("telo-k8s-runner"),
    v.regex(LABEL_VALUE, (issue) => `RUNNER_MANAGED_BY must be a Kubernetes label value, got '${String(issue.input)}'.`),
  ),
  // The runner identity stamped on every object it creates (docs/ownership.md); unset, the one
  // runner of an install owns all of it, unlabelled objects of earlier versions included.
  RUNNER_OWNER_ID: v.pipe(
    stringVar(DEFAULT_OWNER_ID),
    v.regex(
      LABEL_VALUE,
      (issue) =>
        `RUNNER_OWNER_ID must be a Kubernetes label value (at most 63 letters, digits, '-', '_' or '.', beginning and ending with a letter or digit), got '${String(issue.input)}'.`,
    ),
  ),
  RUNNER_DISPLAY_NAME: stringVar("Telo Runner"),
  RUNNER_DESCRIPTION: stringVar("Runs the Telo application in a cloud environment"),
  RUNNER_IMAGE: stringVar("telorun/node:latest-slim"),
  RUNNER_INIT_IMAGE: stringVar("busybox:stable"),
  RUNNER_IMAGE_PULL_SECRET: stringVar(undefined),
  RUNNER_RUNTIME_CLASS: stringVar(undefined),
  RUNNER_MAX_CPU: quantityVar("RUNNER_MAX_CPU", "500m", "500m, 1"),
  RUNNER_MAX_MEMORY: quantityVar("RUNNER_MAX_MEMORY", "512Mi", "512Mi, 1Gi"),
  RUNNER_MAX_TTL_SECONDS: positiveIntVar("RUNNER_MAX_TTL_SECONDS", 3600),
  RUNNER_MAX_EPHEMERAL_STORAGE: quantityVar("RUNNER_MAX_EPHEMERAL_STORAGE", "1Gi", "512Mi, 1Gi"),
  RUNNER_APP_MAX_CPU: quantityVar("RUNNER_APP_MAX_CPU", "500m", "500m, 1"),
  RUNNER_APP_MAX_MEMORY: quantityVar("RUNNER_APP_MAX_MEMORY", "512Mi", "512Mi, 1Gi"),
  RUNNER_APP_MAX_TTL_SECONDS: positiveIntVar("RUNNER_APP_MAX_TTL_SECONDS", 21600),
  RUNNER_APP_MAX_EPHEMERAL_STORAGE: quantityVar("RUNNER_APP_MAX_EPHEMERAL_STORAGE", "1Gi", "512Mi, 1Gi"),
  SESSION_ROUTING_MODE: routingModeVar,
  SESSION_ROUTING_BASE_DOMAIN: stringVar(undefined),
  SESSION_ROUTE_READY_TIMEOUT_SECONDS: positiveIntVar("SESSION_ROUTE_READY_TIMEOUT_SECONDS", 60),
  SESSION_INGRESS_CLASS: stringVar(undefined),
  SESSION_INGRESS_TLS_SECRET: stringVar(undefined),
  SESSION_GATEWAY_NAME: stringVar(undefined),
  SESSION_GATEWAY_NAMESPACE: namespaceVar("SESSION_GATEWAY_NAMESPACE", undefined),
  SESSION_GATEWAY_SECTION_NAME: stringVar(undefined),
  RUNNER_BASE_IMAGE_CATALOG_ENABLED: booleanVar("RUNNER_BASE_IMAGE_CATALOG_ENABLED", true),
  RUNNER_BASE_IMAGE_REPO: stringVar("telorun/node"),
  RUNNER_BASE_IMAGE_PINNED_ONLY: booleanVar("RUNNER_BASE_IMAGE_PINNED_ONLY", true),
  RUNNER_BASE_IMAGE_EXCLUDE_SHA: booleanVar("RUNNER_BASE_IMAGE_EXCLUDE_SHA", true),
  RUNNER_BASE_IMAGE_EXCLUDE_PRERELEASE: booleanVar("RUNNER_BASE_IMAGE_EXCLUDE_PRERELEASE", true),
  RUNNER_BASE_IMAGE_INCLUDE: regexVar("RUNNER_BASE_IMAGE_INCLUDE"),
  RUNNER_BASE_IMAGE_EXCLUDE: regexVar("RUNNER_BASE_IMAGE_EXCLUDE"),
  RUNNER_BASE_IMAGE_LIMIT: positiveIntVar("RUNNER_BASE_IMAGE_LIMIT", 20),
  RUNNER_BASE_IMAGE_REFRESH_SECONDS: positiveIntVar("RUNNER_BASE_IMAGE_REFRESH_SECONDS", 3600),
  // Image build path (docs/kubernetes.md "Image builds"): on exactly when RUNNER_IMAGE_REPOSITORY is set.
  RUNNER_IMAGE_REPOSITORY: baseVar,
  RUNNER_BUILD_NAMESPACE: namespaceVar("RUNNER_BUILD_NAMESPACE", "telo-builds"),
  RUNNER_BUILDER_IMAGE: stringVar("gcr.io/kaniko-project/executor:latest"),
  RUNNER_BUILD_TIMEOUT_SECONDS: positiveIntVar("RUNNER_BUILD_TIMEOUT_SECONDS", 600),
  // The reference enabled this only for the exact string `true`; read like every other boolean
  // so that `1`/`yes` are not silently ignored and a typo is refused.
  RUNNER_REGISTRY_INSECURE: booleanVar("RUNNER_REGISTRY_INSECURE", false),
  RUNNER_REGISTRY_API_URL: baseVar,
  RUNNER_REGISTRY_PUSH_SECRET: stringVar(undefined),
  // Telo versions (docs/telo-versions.md): apps naming version V run `<repository>:<V>-<variant>`.
  RUNNER_TELO_VERSIONS: booleanVar("RUNNER_TELO_VERSIONS", true),
  RUNNER_TELO_IMAGE_REPOSITORY: imageRepositoryVar("RUNNER_TELO_IMAGE_REPOSITORY", "telorun/node"),
  RUNNER_TELO_IMAGE_VARIANT: v.pipe(
    stringVar("slim"),
    v.regex(/^[A-Za-z0-9_.-]{1,64}$/, (issue) => `RUNNER_TELO_IMAGE_VARIANT must be usable in an image tag (letters, digits, '_', '.', '-'), got '${String(issue.input)}'.`),
  ),
  RUNNER_TELO_UNRELEASED_IMAGE: stringVar(undefined),
  RUNNER_PULL_POLICY: picklistVar("RUNNER_PULL_POLICY", PullPolicySchema.options, "missing"),
  // Which workspace marker a watch session seeds: by the kernel's version against the first
  // version that accepts the comment-only marker; RUNNER_IMAGE's version is said here.
  RUNNER_IMAGE_TELO_VERSION: teloVersionVar("RUNNER_IMAGE_TELO_VERSION", undefined),
  RUNNER_TELO_COMMENT_MARKER_SINCE: teloVersionVar("RUNNER_TELO_COMMENT_MARKER_SINCE", "0.96.0"),
  // The warm pool (docs/kubernetes.md "Warm pool"): run pods started ahead of their sessions; 0 turns it off.
  RUNNER_WARM_POOL_SIZE: countVar("RUNNER_WARM_POOL_SIZE"),
  RUNNER_WARM_POOL_MAX_IDLE_SECONDS: positiveIntVar("RUNNER_WARM_POOL_MAX_IDLE_SECONDS", 600),
});

export type KubeEnv = v.InferOutput<typeof kubeEnvSchema>;

/** A settings group named field by field after the variables it comes from, types carried over. */
function settingsOf<const Names extends Record<string, keyof KubeEnv>>(env: KubeEnv, names: Names): { [Field in keyof Names]: KubeEnv[Names[Field]] } {
  return Object.fromEntries(Object.entries(names).map(([field, variable]) => [field, env[variable]])) as { [Field in keyof Names]: KubeEnv[Names[Field]] };
}

function sessionPodSettings(env: KubeEnv) {
  return settingsOf(env, {
    namespace: "RUNNER_SESSION_NAMESPACE",
    managedBy: "RUNNER_MANAGED_BY",
    ownerId: "RUNNER_OWNER_ID",
    initImage: "RUNNER_INIT_IMAGE",
    imagePullSecret: "RUNNER_IMAGE_PULL_SECRET",
    runtimeClass: "RUNNER_RUNTIME_CLASS",
  });
}

/** A set of ceilings: `RUNNER_MAX_*` for run sessions, `RUNNER_APP_MAX_*` for app and watch pods. */
function ceilings(env: KubeEnv, prefix: "RUNNER_" | "RUNNER_APP_") {
  return {
    cpu: env[`${prefix}MAX_CPU`],
    memory: env[`${prefix}MAX_MEMORY`],
    ephemeralStorage: env[`${prefix}MAX_EPHEMERAL_STORAGE`],
    ttlSeconds: env[`${prefix}MAX_TTL_SECONDS`],
  };
}

/** The warm pool: how many unclaimed pods to keep, and how long one may wait before it is replaced. */
function warmPoolSettings(env: KubeEnv) {
  return { size: env.RUNNER_WARM_POOL_SIZE, maxIdleSeconds: env.RUNNER_WARM_POOL_MAX_IDLE_SECONDS };
}

/** How kernel images are chosen: RUNNER_IMAGE, or the image of a named Telo version (docs/telo-versions.md). */
function kernelImageSettings(env: KubeEnv) {
  return {
    defaultImage: env.RUNNER_IMAGE,
    teloVersions: env.RUNNER_TELO_VERSIONS,
    ...settingsOf(env, {
      teloRepository: "RUNNER_TELO_IMAGE_REPOSITORY",
      teloVariant: "RUNNER_TELO_IMAGE_VARIANT",
      unreleasedImage: "RUNNER_TELO_UNRELEASED_IMAGE",
      teloPullPolicy: "RUNNER_PULL_POLICY",
      defaultImageVersion: "RUNNER_IMAGE_TELO_VERSION",
      commentMarkerSince: "RUNNER_TELO_COMMENT_MARKER_SINCE",
    }),
  };
}

function routingConfig(env: KubeEnv) {
  return {
    ...settingsOf(env, {
      mode: "SESSION_ROUTING_MODE",
      baseDomain: "SESSION_ROUTING_BASE_DOMAIN",
      readyTimeoutSeconds: "SESSION_ROUTE_READY_TIMEOUT_SECONDS",
      sessionNamespace: "RUNNER_SESSION_NAMESPACE",
      ingressClass: "SESSION_INGRESS_CLASS",
      tlsSecret: "SESSION_INGRESS_TLS_SECRET",
      gatewayName: "SESSION_GATEWAY_NAME",
      gatewaySectionName: "SESSION_GATEWAY_SECTION_NAME",
    }),
    gatewayNamespace: env.SESSION_GATEWAY_NAMESPACE ?? env.RUNNER_SESSION_NAMESPACE,
  };
}

function baseImageCatalogConfig(env: KubeEnv) {
  return {
    enabled: env.RUNNER_BASE_IMAGE_CATALOG_ENABLED,
    repository: env.RUNNER_BASE_IMAGE_REPO,
    defaultRef: env.RUNNER_IMAGE,
    limit: env.RUNNER_BASE_IMAGE_LIMIT,
    refreshSeconds: env.RUNNER_BASE_IMAGE_REFRESH_SECONDS,
    filter: {
      pinnedOnly: env.RUNNER_BASE_IMAGE_PINNED_ONLY,
      excludeSha: env.RUNNER_BASE_IMAGE_EXCLUDE_SHA,
      excludePrerelease: env.RUNNER_BASE_IMAGE_EXCLUDE_PRERELEASE,
      include: env.RUNNER_BASE_IMAGE_INCLUDE ? [env.RUNNER_BASE_IMAGE_INCLUDE] : [],
      exclude: env.RUNNER_BASE_IMAGE_EXCLUDE ? [env.RUNNER_BASE_IMAGE_EXCLUDE] : [],
    },
  };
}

function buildConfig(repository: string, env: KubeEnv) {
  return {
    repository,
    ...settingsOf(env, {
      namespace: "RUNNER_BUILD_NAMESPACE",
      builderImage: "RUNNER_BUILDER_IMAGE",
      timeoutSeconds: "RUNNER_BUILD_TIMEOUT_SECONDS",
      insecureRegistry: "RUNNER_REGISTRY_INSECURE",
      registryApiUrl: "RUNNER_REGISTRY_API_URL",
      pushSecret: "RUNNER_REGISTRY_PUSH_SECRET",
    }),
  };
}

export type SessionPodSettings = ReturnType<typeof sessionPodSettings>;
export type Ceilings = ReturnType<typeof ceilings>;
export type WarmPoolSettings = ReturnType<typeof warmPoolSettings>;
export type KernelImageSettings = ReturnType<typeof kernelImageSettings>;
export type RoutingConfig = ReturnType<typeof routingConfig>;
export type BaseImageCatalogConfig = ReturnType<typeof baseImageCatalogConfig>;
export type BuildConfig = ReturnType<typeof buildConfig>;
export type KubeRunnerConfig = ReturnType<typeof loadKubeConfig>;

const SELF_URL_REQUIRED =
  "RUNNER_SELF_URL env var is required. Set it to the runner's in-cluster base URL (e.g. http://k8s-runner.telo-runner.svc:8062) so session initContainers can fetch the bundle.";

const GATEWAY_WITH_TLS_SECRET =
  "SESSION_INGRESS_TLS_SECRET is set but SESSION_ROUTING_MODE=gateway. Under Gateway API the origin certificate belongs to the Gateway listener's own `tls.certificateRefs`, not to the per-session route. Move the Secret reference to the Gateway and unset this.";

function gatewayWithoutName(sessionNamespace: string): string {
  return `SESSION_ROUTING_MODE=gateway requires SESSION_GATEWAY_NAME — the Gateway each session's HTTPRoute attaches to. Set it (and SESSION_GATEWAY_NAMESPACE when the Gateway is not in '${sessionNamespace}').`;
}

/** Reads the backend's variables from `env`; every refusal is a ConfigError (exit 2). */
export function loadKubeConfig(env: NodeJS.ProcessEnv) {
  const parsed = parseEnv(kubeEnvSchema, env);
  const selfUrl = parsed.RUNNER_SELF_URL;
  if (!selfUrl) throw new ConfigError(SELF_URL_REQUIRED);
  if (parsed.SESSION_ROUTING_MODE === "gateway") {
    if (parsed.SESSION_INGRESS_TLS_SECRET) throw new ConfigError(GATEWAY_WITH_TLS_SECRET);
    if (!parsed.SESSION_GATEWAY_NAME) throw new ConfigError(gatewayWithoutName(parsed.RUNNER_SESSION_NAMESPACE));
  }
  return {
    /** Bundle-fetch base URL (the RUNNER_BUNDLE_PORT listener), trailing `/`s stripped. */
    selfUrl,
    bundlePort: parsed.RUNNER_BUNDLE_PORT,
    /** The embedded simulated cluster of `npm start`: `config.simulate` becomes pod annotations. */
    simulatedCluster: parsed.RUNNER_SIMULATED_CLUSTER,
    startDeadlineMs: parsed.RUNNER_START_DEADLINE_SECONDS * 1000,
    /** What the capabilities call this runner. */
    identity: { displayName: parsed.RUNNER_DISPLAY_NAME, description: parsed.RUNNER_DESCRIPTION },
    /** The image of a session whose config names none. */
    defaultImage: parsed.RUNNER_IMAGE,
    /** RUNNER_IMAGE and the Telo-version images, with their pull policies and marker versions. */
    kernelImages: kernelImageSettings(parsed),
    sessionPods: sessionPodSettings(parsed),
    runCeilings: ceilings(parsed, "RUNNER_"),
    appCeilings: ceilings(parsed, "RUNNER_APP_"),
    warmPool: warmPoolSettings(parsed),
    routing: routingConfig(parsed),
    baseImageCatalog: baseImageCatalogConfig(parsed),
    /** The image build path of docs/kubernetes.md "Image builds"; undefined when RUNNER_IMAGE_REPOSITORY is unset. */
    build: parsed.RUNNER_IMAGE_REPOSITORY ? buildConfig(parsed.RUNNER_IMAGE_REPOSITORY, parsed) : undefined,
  };
}

const localClusterEnvSchema = v.pick(kubeEnvSchema, ["RUNNER_SESSION_NAMESPACE", "RUNNER_BUILD_NAMESPACE", "RUNNER_BUNDLE_PORT"]);

/**
 * What laying out the embedded simulated cluster needs, read before the runner's own config can
 * load (RUNNER_SELF_URL is derived from the bundle port here): the namespaces to create and the
 * port session pods fetch their bundle from, with the same defaults and checks as loadKubeConfig.
 */
export function loadLocalClusterLayout(env: NodeJS.ProcessEnv) {
  const parsed = parseEnv(localClusterEnvSchema, env);
  return {
    sessionNamespace: parsed.RUNNER_SESSION_NAMESPACE,
    buildNamespace: parsed.RUNNER_BUILD_NAMESPACE,
    bundlePort: parsed.RUNNER_BUNDLE_PORT,
    /** RUNNER_BUNDLE_PORT unset: `npm start` then picks a free port rather than 8063. */
    bundlePortIsDefault: env.RUNNER_BUNDLE_PORT === undefined,
  };
}
