/**
 * The base-image picker (docs/api.md "Capabilities"): which tags of a Docker Hub repository the runner
 * offers as `config.image`, and the digest of a moving tag for the build path (docs/kubernetes.md "Image builds").
 * The tag rules and the offered list are pure functions; `DockerHubClient` does the fetching
 * through an injected `fetch`, and the refresh cadence belongs to its caller.
 */
import * as v from "valibot";
import type { BaseImageCatalogConfig } from "../../config/kube.ts";

export type TagFilter = BaseImageCatalogConfig["filter"];

const PINNED = /^\d+\.\d+\.\d+([-.].*)?$/;
const SHA = /^(sha-)?[0-9a-f]{7,}$/i;
const PRERELEASE_WORDS = new Set(["rc", "alpha", "beta", "pre", "preview", "next", "canary", "dev", "nightly", "snapshot"]);

/** A pinned `X.Y.Z-<rest>` whose first identifier marks a prerelease; `-slim`, `-rust-1.95.0` are not. */
function isPrerelease(tag: string): boolean {
  const rest = /^\d+\.\d+\.\d+-(.+)$/.exec(tag)?.[1];
  if (rest === undefined) return false;
  const first = rest.split(/[-.]/)[0]?.toLowerCase() ?? "";
  return PRERELEASE_WORDS.has(first);
}

/** A tag must pass every enabled rule. */
export function tagPasses(tag: string, filter: TagFilter): boolean {
  if (filter.pinnedOnly && !PINNED.test(tag)) return false;
  if (filter.excludeSha && SHA.test(tag)) return false;
  if (filter.excludePrerelease && isPrerelease(tag)) return false;
  if (filter.include.length > 0 && !filter.include.some((pattern) => pattern.test(tag))) return false;
  if (filter.exclude.some((pattern) => pattern.test(tag))) return false;
  return true;
}

/** The first `limit` passing tags, in input (newest-first) order. */
export function selectTags(tags: readonly string[], filter: TagFilter, limit: number): string[] {
  return tags.filter((tag) => tagPasses(tag, filter)).slice(0, limit);
}

/**
 * The offered images: the default first (always offered, even if the filter would drop it),
 * then `<repository>:<tag>` for each selected tag, without duplicates. Before the first
 * successful refresh, `tags` is empty and only the default is offered.
 */
export function offeredImages(defaultRef: string, repository: string, tags: readonly string[]): string[] {
  return [...new Set([defaultRef, ...tags.map((tag) => `${repository}:${tag}`)])];
}

/** The request gate's refusal when a session names an image the picker does not offer. */
export function notOfferedMessage(image: string, offered: readonly string[]): string {
  return `base image '${image}' is not offered by this runner. Allowed images: ${offered.join(", ")}`;
}

export interface DockerHubRef {
  namespace: string;
  repository: string;
  tag: string;
  digest?: string;
}

const HUB_HOSTS = new Set(["docker.io", "index.docker.io", "registry-1.docker.io"]);

/** A Docker Hub image reference in parts; null for an image on any other registry. */
export function parseDockerHubRef(ref: string): DockerHubRef | null {
  const at = ref.indexOf("@");
  const digest = at === -1 ? undefined : ref.slice(at + 1);
  let name = at === -1 ? ref : ref.slice(0, at);
  const firstSegment = name.split("/")[0] ?? "";
  if (name.includes("/") && (firstSegment.includes(".") || firstSegment.includes(":") || firstSegment === "localhost")) {
    if (!HUB_HOSTS.has(firstSegment)) return null;
    name = name.slice(firstSegment.length + 1);
  }
  const colon = name.lastIndexOf(":");
  const hasTag = colon > name.lastIndexOf("/");
  const path = hasTag ? name.slice(0, colon) : name;
  const tag = hasTag ? name.slice(colon + 1) : "latest";
  const slash = path.indexOf("/");
  const namespace = slash === -1 ? "library" : path.slice(0, slash);
  const repository = slash === -1 ? path : path.slice(slash + 1);
  return { namespace, repository, tag, ...(digest !== undefined && { digest }) };
}

/** `ns/repo` as Docker Hub's API addresses it: a bare name is an official `library/` image. */
function hubRepositoryPath(repository: string): string {
  return repository.includes("/") ? repository : `library/${repository}`;
}

/** The `fetch` subset the client uses (undici's and Node's global `fetch` both fit). */
export type FetchLike = (
  url: string,
  init: { headers: Record<string, string>; signal: AbortSignal },
) => Promise<{ ok: boolean; status: number; statusText: string; json(): Promise<unknown> }>;

const tagPageSchema = v.object({
  next: v.nullish(v.string()),
  results: v.array(v.object({ name: v.string(), last_updated: v.nullish(v.string()) })),
});

const tagDetailSchema = v.object({
  digest: v.nullish(v.string()),
  images: v.nullish(v.array(v.object({ digest: v.nullish(v.string()) }))),
});

/** How a base reference's digest was found, or why it was not. */
export type DigestResolution =
  | { kind: "pinned"; digest: string }
  | { kind: "resolved"; digest: string }
  | { kind: "not-hub" }
  | { kind: "failed"; message: string };

export interface DockerHubClientOptions {
  fetch: FetchLike;
  /** `https://hub.docker.com` unless a test points elsewhere. */
  baseUrl?: string;
  requestTimeoutMs?: number;
  maxTagsScanned?: number;
}

export class DockerHubClient {
  readonly #fetch: FetchLike;
  readonly #baseUrl: string;
  readonly #timeoutMs: number;
  readonly #maxTagsScanned: number;

  constructor(options: DockerHubClientOptions) {
    this.#fetch = options.fetch;
    this.#baseUrl = (options.baseUrl ?? "https://hub.docker.com").replace(/\/+$/, "");
    this.#timeoutMs = options.requestTimeoutMs ?? 10_000;
    this.#maxTagsScanned = options.maxTagsScanned ?? 200;
  }

  async #getJson(url: string): Promise<{ ok: true; body: unknown } | { ok: false; status: string }> {
    const response = await this.#fetch(url, {
      headers: { accept: "application/json" },
      signal: AbortSignal.timeout(this.#timeoutMs),
    });
    if (!response.ok) return { ok: false, status: `${response.status} ${response.statusText}` };
    return { ok: true, body: await response.json() };
  }

  /**
   * The repository's tag names, newest first (by `last_updated`), following `next` pages until
   * none is left or `maxTagsScanned` were collected. Throws on a non-2xx answer.
   */
  async listTags(repository: string): Promise<string[]> {
    const origin = new URL(this.#baseUrl).origin;
    const collected: Array<{ name: string; updated: string }> = [];
    let url: string | undefined = `${this.#baseUrl}/v2/repositories/${hubRepositoryPath(repository)}/tags?page_size=100`;
    while (url !== undefined && collected.length < this.#maxTagsScanned) {
      const answer = await this.#getJson(url);
      if (!answer.ok) throw new Error(`Docker Hub tags request for '${repository}' failed: ${answer.status}`);
      const page = v.parse(tagPageSchema, answer.body);
      collected.push(...page.results.map((tag) => ({ name: tag.name, updated: tag.last_updated ?? "" })));
      // Only pages of the same service are followed: the runner never fetches where an answer points.
      url = page.next && new URL(page.next).origin === origin ? page.next : undefined;
    }
    return collected
      .sort((a, b) => (a.updated < b.updated ? 1 : a.updated > b.updated ? -1 : 0))
      .map((tag) => tag.name);
  }

  /**
   * The current digest of a Docker Hub tag. A reference pinned `@sha256:…` (on any registry)
   * needs no request; a tag on another registry is not resolved.
   */
  async resolveTagDigest(ref: string): Promise<DigestResolution> {
    const at = ref.indexOf("@");
    if (at !== -1) return { kind: "pinned", digest: ref.slice(at + 1) };
    const parsed = parseDockerHubRef(ref);
    if (parsed === null) return { kind: "not-hub" };
    const repository = `${parsed.namespace}/${parsed.repository}`;
    const url = `${this.#baseUrl}/v2/repositories/${repository}/tags/${encodeURIComponent(parsed.tag)}`;
    try {
      const answer = await this.#getJson(url);
      if (!answer.ok) return { kind: "failed", message: `Docker Hub tag request for '${ref}' failed: ${answer.status}` };
      const detail = v.parse(tagDetailSchema, answer.body);
      const digest = detail.digest ?? detail.images?.find((image) => image.digest)?.digest;
      return digest ? { kind: "resolved", digest } : { kind: "failed", message: `Docker Hub reports no digest for '${ref}'` };
    } catch (error) {
      return { kind: "failed", message: `Docker Hub tag request for '${ref}' failed: ${(error as Error).message}` };
    }
  }
}
