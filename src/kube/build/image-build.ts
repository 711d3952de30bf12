/**
 * The image build path (docs/kubernetes.md "Image builds"): when RUNNER_IMAGE_REPOSITORY is set, a run
 * session runs a per-app image with its module closure installed, built once per dependency
 * key by a Kaniko Job in the build namespace and reused while the registry holds it.
 *
 * `ensureImage` resolves the base digest (pull policy `always` only), derives the tag, asks the
 * registry whether `<repository>:<tag>` exists and otherwise stages the build context, creates
 * the Job and polls it to the end. Concurrent requests for the same image share one attempt.
 */
import type { V1ContainerStatus, V1Job, V1Pod } from "@kubernetes/client-node";
import { type Response, fetch as undiciFetch } from "undici";
import type { BuildConfig } from "../../config/kube.ts";
import type { PullPolicy, RunBundle } from "../../contract/wire.ts";
import type { Logger } from "../../log.ts";
import { timeBuild } from "../../metrics/figures.ts";
import { SessionStartError } from "../../sessions/backend-seam.ts";
import { type KubeApi, withDeadline } from "../cluster/api.ts";
import { BundleArchiveError, bundleArchive } from "../bundle/bundle-archive.ts";
import type { BundleStore } from "../bundle/bundle-store.ts";
import { imageTag } from "./dependency-key.ts";
import { DockerHubClient } from "../images/image-catalog.ts";
import {
  basicAuthorization,
  bearerTokenOf,
  credentialsFor,
  MANIFEST_ACCEPT,
  manifestUrl,
  parseBearerChallenge,
  type RegistryCredentials,
  tokenRequestUrl,
} from "./registry-auth.ts";
import { buildJob, builtImageReference } from "../specs/build-job.ts";
import { buildContextFiles, dockerfile } from "../specs/dockerfile.ts";
import { buildJobName, jobPodsSelector, type Stamp } from "../specs/names.ts";
import { apiReason, isConflict, isNotFound } from "../status/api-error.ts";

/** Each Kubernetes call gets this long; the typed clients have no timeout of their own. */
const API_CALL_MS = 10_000;
/** Each registry request (manifest HEAD, token GET) gets this long before it counts as "absent". */
const REGISTRY_REQUEST_MS = 10_000;
/** The wait outlasts the Job's own activeDeadlineSeconds so the Job's verdict normally decides. */
const WAIT_GRACE_MS = 30_000;
const LOG_TAIL_LINES = 20;
const DEFAULT_POLL_MS = 2000;

export interface ImageBuilderOptions {
  api: KubeApi;
  build: BuildConfig;
  /** The store behind the bundle route; the build context is staged there as `build-<tag>`. */
  bundles: BundleStore;
  log: Logger;
  /** The install and owner labels of the build Job and its pod. */
  stamp: Stamp;
  /** RUNNER_INIT_IMAGE, for the Job's context-fetch init container. */
  initImage: string;
  /** Resolves the base tag's digest under pull policy `always`; Docker Hub by default. */
  hub?: DockerHubClient;
  /** The HTTP client of the registry existence check (and of the default Hub client). */
  fetch?: typeof undiciFetch;
  /** How often the build Job is read while waiting. */
  pollMs?: number;
}

export interface EnsureImageInput {
  sessionId: string;
  /** The app the image is for; only for logs (the caller qualifies the progress). */
  app: string;
  bundle: RunBundle;
  /** `config.image || RUNNER_IMAGE`. */
  baseImage: string;
  pullPolicy: PullPolicy;
  /** The app's entry, installed by the Dockerfile's `telo install`. */
  entryRelativePath: string;
  /**
   * The session's module registry (TELO_REGISTRY_URL). Not consumed yet: the tag
   * (`imageTag`), the Dockerfile and the Job follow 0.13, which has no registry input, so an
   * image is shared across registries until those builders take it.
   */
  registryUrl?: string;
}

/** Build progress; the caller sends it as `onProgress("build", message, done, app)`. */
export type BuildProgress = (message: string, done?: boolean) => void;

const BUILD_STAGE = "create";

function buildFailure(message: string, cause?: unknown): SessionStartError {
  return new SessionStartError(BUILD_STAGE, message, cause === undefined ? undefined : { cause });
}

/** Whether the Job reached a verdict: the counters, or a terminal condition the counters lag behind. */
function jobOutcome(job: V1Job): "succeeded" | "failed" | undefined {
  const status = job.status;
  const conditions = status?.conditions ?? [];
  const has = (type: string) => conditions.some((c) => c.type === type && c.status === "True");
  if ((status?.succeeded ?? 0) >= 1 || has("Complete")) return "succeeded";
  if ((status?.failed ?? 0) >= 1 || has("Failed")) return "failed";
  return undefined;
}

/**
 * The container whose log explains a failed build pod: the first that exited non-zero (a
 * failed context-fetch never lets Kaniko start), else the pod's main container.
 */
function failedContainer(pod: V1Pod): string | undefined {
  const statuses: V1ContainerStatus[] = [...(pod.status?.initContainerStatuses ?? []), ...(pod.status?.containerStatuses ?? [])];
  const failed = statuses.find((s) => (s.state?.terminated?.exitCode ?? 0) !== 0);
  return failed?.name ?? pod.spec?.containers[0]?.name;
}

export class ImageBuilder {
  readonly #api: KubeApi;
  readonly #build: BuildConfig;
  readonly #bundles: BundleStore;
  readonly #log: Logger;
  readonly #stamp: Stamp;
  readonly #initImage: string;
  readonly #hub: DockerHubClient;
  readonly #fetch: typeof undiciFetch;
  readonly #pollMs: number;
  /** Single flight: the attempt in progress for each image reference. */
  readonly #inFlight = new Map<string, Promise<string>>();

  constructor(options: ImageBuilderOptions) {
    this.#api = options.api;
    this.#build = options.build;
    this.#bundles = options.bundles;
    this.#log = options.log;
    this.#stamp = options.stamp;
    this.#initImage = options.initImage;
    this.#fetch = options.fetch ?? undiciFetch;
    this.#hub = options.hub ?? new DockerHubClient({ fetch: this.#fetch });
    this.#pollMs = options.pollMs ?? DEFAULT_POLL_MS;
  }

  /**
   * The image reference the session's pod runs. Throws a SessionStartError (stage `create`)
   * when the image can be neither found nor built.
   */
  async ensureImage(input: EnsureImageInput, onProgress: BuildProgress): Promise<string> {
    const baseDigest = await this.#baseDigest(input, onProgress);
    const tag = imageTag({ baseImage: input.baseImage, baseDigest, files: input.bundle.files });
    const ref = builtImageReference(this.#build.repository, tag);

    // No await between the lookup and the insertion: two callers cannot both start an attempt.
    const running = this.#inFlight.get(ref);
    if (running) {
      onProgress("Waiting for in-progress build…");
      return running;
    }
    const attempt = this.#provide(input, tag, ref, baseDigest, onProgress).finally(() => this.#inFlight.delete(ref));
    this.#inFlight.set(ref, attempt);
    return attempt;
  }

  /**
   * The base tag's current digest, so a moved tag means a new image — only when the session
   * asked for freshness (`always`). A failed lookup keeps the cached image rather than forcing
   * a rebuild.
   */
  async #baseDigest(input: EnsureImageInput, onProgress: BuildProgress): Promise<string | undefined> {
    if (input.pullPolicy !== "always") return undefined;
    const resolution = await this.#hub.resolveTagDigest(input.baseImage);
    switch (resolution.kind) {
      case "pinned":
      case "resolved":
        return resolution.digest;
      case "not-hub":
        return undefined;
      case "failed":
        onProgress(`Base image freshness check failed (${resolution.message}); using cached image`);
        return undefined;
    }
  }

  async #provide(input: EnsureImageInput, tag: string, ref: string, baseDigest: string | undefined, onProgress: BuildProgress): Promise<string> {
    const fields = { sessionId: input.sessionId, app: input.app, image: ref };
    if (await this.#exists(tag)) {
      this.#log.info("using cached session image", fields);
      onProgress("Using cached image", true);
      return ref;
    }
    onProgress("Building image…");
    this.#log.info("building session image", fields);
    try {
      await timeBuild(this.#runBuild(input, tag, baseDigest));
    } catch (err) {
      this.#log.warn("session image build failed", { ...fields, error: err });
      throw err;
    }
    this.#log.info("session image built", fields);
    onProgress("Image built", true);
    return ref;
  }

  /** Stages the context, creates the Job (or joins the one already building this tag) and waits. */
  async #runBuild(input: EnsureImageInput, tag: string, baseDigest: string | undefined): Promise<void> {
    const contextId = `build-${tag}`;
    let archive: Buffer;
    try {
      const text = dockerfile({ baseImage: input.baseImage, baseDigest, entryRelativePath: input.entryRelativePath });
      archive = await bundleArchive(buildContextFiles(input.bundle.files, text));
    } catch (err) {
      if (err instanceof BundleArchiveError) throw buildFailure(err.message, err);
      throw err;
    }
    const contextUrl = this.#bundles.stage(contextId, archive);
    try {
      const job = buildJob({ build: this.#build, managedBy: this.#stamp.managedBy, ownerId: this.#stamp.ownerId, initImage: this.#initImage, tag, contextUrl });
      await this.#createJob(job);
      await this.#waitForJob(buildJobName(tag));
    } finally {
      this.#bundles.drop(contextId);
    }
  }

  async #createJob(job: V1Job): Promise<void> {
    try {
      await withDeadline(this.#api.batch.createNamespacedJob({ namespace: this.#build.namespace, body: job }), API_CALL_MS, "build Job create");
    } catch (err) {
      // The tag is the Job's name: a Job of this name is building (or built) this very image.
      if (isConflict(err)) return;
      throw buildFailure(`failed to create image build job: ${apiReason(err)}`, err);
    }
  }

  async #waitForJob(name: string): Promise<void> {
    const namespace = this.#build.namespace;
    const deadline = Date.now() + this.#build.timeoutSeconds * 1000 + WAIT_GRACE_MS;
    for (;;) {
      let job: V1Job | undefined;
      try {
        job = await withDeadline(this.#api.batch.readNamespacedJob({ name, namespace }), API_CALL_MS, "build Job read");
      } catch (err) {
        if (isNotFound(err)) throw buildFailure(`image build job '${name}' disappeared before completing`, err);
        // Any other read failure is transient as far as the build is concerned: read again.
        this.#log.debug("build Job read failed", { job: name, error: err });
      }
      const outcome = job && jobOutcome(job);
      if (outcome === "succeeded") return;
      if (outcome === "failed") {
        const tail = await this.#logTail(name);
        throw buildFailure(tail ? `image build failed: ${tail}` : "image build failed");
      }
      const remaining = deadline - Date.now();
      if (remaining <= 0) throw buildFailure(`image build did not finish within ${this.#build.timeoutSeconds}s`);
      await new Promise((resolve) => setTimeout(resolve, Math.min(this.#pollMs, remaining)));
    }
  }

  /** The last lines the failed build pod wrote; empty when there is no pod or log to read. */
  async #logTail(jobName: string): Promise<string> {
    const namespace = this.#build.namespace;
    try {
      const pods = await withDeadline(
        this.#api.core.listNamespacedPod({ namespace, labelSelector: jobPodsSelector(jobName) }),
        API_CALL_MS,
        "build pod list",
      );
      const pod = pods.items[0];
      const podName = pod?.metadata?.name;
      if (!pod || !podName) return "";
      const container = failedContainer(pod);
      const log = await withDeadline(
        this.#api.core.readNamespacedPodLog({ name: podName, namespace, tailLines: LOG_TAIL_LINES, ...(container && { container }) }),
        API_CALL_MS,
        "build pod log read",
      );
      return log.trim();
    } catch (err) {
      this.#log.debug("build log tail unavailable", { job: jobName, error: err });
      return "";
    }
  }

  /**
   * Whether the registry already holds `<repository>:<tag>`. Every failure — no API URL, an
   * unreachable registry, refused credentials — answers "absent": a needless build is the
   * safe mistake, a session started on a missing image is not.
   */
  async #exists(tag: string): Promise<boolean> {
    const url = manifestUrl(this.#build.registryApiUrl, this.#build.repository, tag);
    if (url === undefined) return false;
    try {
      const credentials = await this.#credentials(url);
      const first = await this.#headManifest(url, credentials && basicAuthorization(credentials));
      if (first.status !== 401 || !credentials) return first.ok;
      // Token registries ignore Basic on the API and point at their token service instead.
      const challenge = parseBearerChallenge(first.headers.get("www-authenticate") ?? "");
      if (!challenge) return false;
      const token = await this.#bearerToken(tokenRequestUrl(challenge, this.#build.repository), credentials);
      if (token === undefined) return false;
      return (await this.#headManifest(url, `Bearer ${token}`)).ok;
    } catch (err) {
      this.#log.debug("image existence check failed", { tag, error: err });
      return false;
    }
  }

  async #headManifest(url: string, authorization: string | undefined): Promise<Response> {
    const response = await this.#fetch(url, {
      method: "HEAD",
      headers: { accept: MANIFEST_ACCEPT, ...(authorization && { authorization }) },
      signal: AbortSignal.timeout(REGISTRY_REQUEST_MS),
    });
    // Nothing to read from a HEAD, but the connection is only reusable once the body is settled.
    await response.body?.cancel();
    return response;
  }

  async #bearerToken(url: string, credentials: RegistryCredentials): Promise<string | undefined> {
    const response = await this.#fetch(url, {
      headers: { accept: "application/json", authorization: basicAuthorization(credentials) },
      signal: AbortSignal.timeout(REGISTRY_REQUEST_MS),
    });
    if (!response.ok) {
      await response.body?.cancel();
      return undefined;
    }
    return bearerTokenOf(await response.json());
  }

  /**
   * The push Secret's credentials for the registry: the entry for the API host, else for the
   * repository's host (the one Kaniko pushes to). Needs `get secrets` in the build namespace;
   * without it (or without a Secret) the check goes anonymous.
   */
  async #credentials(apiUrl: string): Promise<RegistryCredentials | undefined> {
    const secretName = this.#build.pushSecret;
    if (secretName === undefined) return undefined;
    let encoded: string | undefined;
    try {
      const secret = await withDeadline(
        this.#api.core.readNamespacedSecret({ name: secretName, namespace: this.#build.namespace }),
        API_CALL_MS,
        "push Secret read",
      );
      encoded = secret.data?.[".dockerconfigjson"];
    } catch (err) {
      this.#log.warn("could not read the registry push Secret; checking the registry anonymously", {
        secret: secretName,
        namespace: this.#build.namespace,
        reason: apiReason(err),
      });
      return undefined;
    }
    if (encoded === undefined) return undefined;
    const config = Buffer.from(encoded, "base64").toString("utf8");
    return credentialsFor(config, apiUrl) ?? credentialsFor(config, this.#build.repository);
  }
}
