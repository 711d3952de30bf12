/**
 * The pure parts of the build path's image existence check (docs/kubernetes.md "Image builds"): where to ask,
 * with which Accept header, which credentials of the push Secret's `.dockerconfigjson` apply to
 * the registry, and how to follow a `WWW-Authenticate: Bearer` challenge to a token.
 */
import * as v from "valibot";
import { parseJsonAs } from "../../contract/parse-json.ts";

/** Every manifest media type a registry may answer for a tag. */
export const MANIFEST_ACCEPT = [
  "application/vnd.oci.image.manifest.v1+json",
  "application/vnd.oci.image.index.v1+json",
  "application/vnd.docker.distribution.manifest.v2+json",
  "application/vnd.docker.distribution.manifest.list.v2+json",
].join(", ");

/** The repository path inside its registry: everything after the host segment. */
function repositoryPath(repository: string): string | undefined {
  const slash = repository.indexOf("/");
  return slash === -1 ? undefined : repository.slice(slash + 1);
}

/**
 * The HEAD request that tells whether `<repository>:<tag>` exists; undefined when it cannot be
 * asked (no API URL, or a repository without a registry host), which means "build".
 */
export function manifestUrl(registryApiUrl: string | undefined, repository: string, tag: string): string | undefined {
  const path = repositoryPath(repository);
  if (registryApiUrl === undefined || path === undefined) return undefined;
  return `${registryApiUrl.replace(/\/+$/, "")}/v2/${path}/manifests/${tag}`;
}

/** `host[:port]` of a URL, registry key or bare host: scheme and path stripped. */
export function registryHost(location: string): string {
  return location.replace(/^[a-z][a-z0-9+.-]*:\/\//i, "").split("/")[0] ?? "";
}

export interface RegistryCredentials {
  username: string;
  password: string;
}

const dockerConfigSchema = v.object({
  auths: v.record(
    v.string(),
    v.looseObject({
      username: v.optional(v.string()),
      password: v.optional(v.string()),
      auth: v.optional(v.string()),
    }),
  ),
});

type AuthEntry = v.InferOutput<typeof dockerConfigSchema>["auths"][string];

function entryCredentials(entry: AuthEntry): RegistryCredentials | undefined {
  if (entry.username !== undefined && entry.password !== undefined) {
    return { username: entry.username, password: entry.password };
  }
  if (entry.auth === undefined) return undefined;
  const decoded = Buffer.from(entry.auth, "base64").toString("utf8");
  const colon = decoded.indexOf(":");
  return colon === -1 ? undefined : { username: decoded.slice(0, colon), password: decoded.slice(colon + 1) };
}

/**
 * The credentials a `.dockerconfigjson` holds for `registry` (a URL or host): the entry keyed
 * exactly by the host first, then any entry whose key normalises to it (`https://host/v1/`).
 * Undefined for malformed JSON or no matching entry: the check then goes anonymous.
 */
export function credentialsFor(dockerConfigJson: string, registry: string): RegistryCredentials | undefined {
  const auths = parseJsonAs(dockerConfigSchema, dockerConfigJson)?.auths;
  if (!auths) return undefined;
  const host = registryHost(registry);
  const exact = auths[host];
  if (exact) return entryCredentials(exact);
  const normalised = Object.entries(auths).find(([key]) => registryHost(key) === host);
  return normalised ? entryCredentials(normalised[1]) : undefined;
}

export function basicAuthorization(credentials: RegistryCredentials): string {
  return `Basic ${Buffer.from(`${credentials.username}:${credentials.password}`, "utf8").toString("base64")}`;
}

export interface BearerChallenge {
  realm: string;
  service?: string;
  scope?: string;
}

const AUTH_PARAM = /\s*([A-Za-z][\w-]*)\s*=\s*(?:"((?:[^"\\]|\\.)*)"|([^\s,]*))\s*(?:,|$)/y;

/** `Bearer realm="…",service="…",scope="…"` → its parameters; undefined for any other scheme. */
export function parseBearerChallenge(header: string): BearerChallenge | undefined {
  const scheme = /^\s*Bearer\s+/i.exec(header);
  if (!scheme) return undefined;
  const params = new Map<string, string>();
  AUTH_PARAM.lastIndex = scheme[0].length;
  for (let match = AUTH_PARAM.exec(header); match; match = AUTH_PARAM.exec(header)) {
    const [, key, quoted, token] = match;
    params.set(key!.toLowerCase(), quoted !== undefined ? quoted.replace(/\\(.)/g, "$1") : (token ?? ""));
    if (AUTH_PARAM.lastIndex >= header.length) break;
  }
  const realm = params.get("realm");
  if (!realm) return undefined;
  const service = params.get("service");
  const scope = params.get("scope");
  return { realm, ...(service !== undefined && { service }), ...(scope !== undefined && { scope }) };
}

/** The token request of a challenge: `service` and `scope` (default: pull on the repository). */
export function tokenRequestUrl(challenge: BearerChallenge, repository: string): string {
  const url = new URL(challenge.realm);
  if (challenge.service !== undefined) url.searchParams.set("service", challenge.service);
  url.searchParams.set("scope", challenge.scope ?? `repository:${repositoryPath(repository) ?? repository}:pull`);
  return url.toString();
}

const tokenResponseSchema = v.looseObject({
  token: v.optional(v.string()),
  access_token: v.optional(v.string()),
});

/** The bearer token of a token endpoint's JSON answer (`token`, else `access_token`). */
export function bearerTokenOf(body: unknown): string | undefined {
  const parsed = v.safeParse(tokenResponseSchema, body);
  if (!parsed.success) return undefined;
  return parsed.output.token || parsed.output.access_token || undefined;
}
