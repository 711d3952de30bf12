/**
 * The Kubernetes backend (docs/kubernetes.md): sessions as pods in the session namespace, followed by
 * one shared pod watch; probe, capabilities and the config gate; and at boot, the re-adoption
 * of session pods an earlier supervisor left running (their workload tokens read back), the reap
 * of what no record explains, and the sweep of workspace-app ConfigMaps no pod mounts and of
 * token Secrets no pod reads.
 */
import type { V1Pod } from "@kubernetes/client-node";
import type { AppsCatalog } from "../config/apps-catalog.ts";
import type { AvailabilityReport } from "../contract/wire.ts";
import { type AdoptableSession, type AdoptionCeiling, type Backend, type PoolPeers, SessionMoved, type StartSpec } from "../sessions/backend-seam.ts";
import type { KubeContext } from "./context.ts";
import { partitionBootPods, reapFailureMessage, settled, staleWorkspaceConfigMaps } from "./boot-housekeeping.ts";
import type { ImagePicker } from "./images/image-picker.ts";
import { notOfferedMessage } from "./images/image-catalog.ts";
import { withDeadline } from "./cluster/api.ts";
import { CALL_DEADLINE_MS, deletePod, readPods } from "./cluster/pod-calls.ts";
import { RunSession } from "./session/run-session.ts";
import { APP_CONTAINER_PREFIX, LABEL, ownedObjects, POOL_POD_PREFIX, workspaceConfigMapName } from "./specs/names.ts";
import { WarmPool } from "./pool/warm-pool.ts";
import type { SessionRecord } from "./specs/session-record.ts";
import { apiReason, isNotFound } from "./status/api-error.ts";
import { PROBE_API_UNREACHABLE, PROBE_READY, probeNamespaceMissing } from "./status/probe.ts";
import { runtimeClassProbePod } from "./specs/runtime-class-probe.ts";
import {
  probeRuntimeClassMissing,
  type RuntimeClassVerdict,
  runtimeClassMissingMessage,
  runtimeClassVerdict,
} from "./status/runtime-class.ts";
import { WatchSession } from "./session/watch-session.ts";
import { type AdoptedStreams, adoptedStreams, claimStreams } from "./session/stream-marks-calls.ts";
import { adoptedToken, sweepTokenSecrets } from "./session/token-secret-calls.ts";
import { WORKSPACE_APP_MANIFEST } from "./workspace-app/manifest.ts";
import { unreleasedReason } from "../sessions/telo-gate.ts";
import { namesTeloVersion } from "./specs/kernel-image.ts";

const PULL_POLICY_DESCRIPTION =
  "Kernel-image freshness, applied as the Pod's imagePullPolicy. `always` re-pulls on every session, so a moving tag like `latest-slim` picks up a new release. `missing` pulls only when the node has no copy. `never` never pulls at all — on a node that has not already cached the image the session fails to start (ErrImageNeverPull), so it suits a cluster that pre-loads its images and nothing else.";

export type KubeBackendOptions = {
  picker: ImagePicker | undefined;
  catalog: AppsCatalog;
  /** RUNNER_WATCH_MAX_TTL_SECONDS (a core variable): one deadline for a whole watch pod. */
  watchTtlSeconds: number;
  /** Several replicas: the warm pool's view of the others (docs/replicas.md "The warm pool beside several replicas"). */
  poolPeers: PoolPeers | undefined;
  /** The housekeeping sweeps only workspace ConfigMaps and token Secrets older than this (boot-housekeeping.ts SWEEP_MIN_AGE_MS). */
  sweepMinAgeMs: number;
};

export function createKubeBackend(ctx: KubeContext, options: KubeBackendOptions): Backend {
  const { config } = ctx;
  const watchOptions = { ttlSeconds: options.watchTtlSeconds };
  const pool = ctx.poolClaims && new WarmPool(ctx, ctx.poolClaims, options.poolPeers);
  // A replica back under its identity and listener (a restarted container) tells the pods it
  // made, that were claimed and never got their answer, as one replica does at boot.
  if (pool && options.poolPeers) void ctx.watcher.ready.then(() => pool.adopt([], claimedPoolPods(partitionBootPods(ctx.watcher.pods(), ctx.config.sessionPods))));

  return {
    describe: () => ({
      displayName: config.identity.displayName,
      description: config.identity.description,
      io: ["tty", "streams"],
      ports: true,
      config: {
        imageDefault: config.defaultImage,
        ...(options.picker && { imageEnum: options.picker.offered() }),
        enforced: true,
        pullPolicyDescription: PULL_POLICY_DESCRIPTION,
        registryUrl: false,
      },
    }),

    validateAppName(name) {
      // A watch pod names each app's container `app-<name>`, and container names are DNS labels.
      const longest = 63 - APP_CONTAINER_PREFIX.length;
      if (name.length <= longest) return undefined;
      return `app name '${name}' is too long for this runner: at most ${longest} characters, since its container is named ${APP_CONTAINER_PREFIX}<name>`;
    },

    validateConfig(sessionConfig) {
      const offered = options.picker?.offered();
      const image = sessionConfig.image;
      if (offered && image !== undefined && !offered.includes(image)) return notOfferedMessage(image, offered);
      return undefined;
    },

    // Off (RUNNER_TELO_VERSIONS=false): no `features.teloVersions`, and any `telo` is refused.
    ...(config.kernelImages.teloVersions && {
      supplyTelo: (version: string) => (config.kernelImages.unreleasedImage ? undefined : unreleasedReason(version)),
    }),

    probe: () => probe(ctx),

    async start(spec, callbacks) {
      if (spec.mode === "watch") return new WatchSession(ctx, spec, callbacks, watchOptions).start();
      return new RunSession(ctx, spec, callbacks, pool).start();
    },

    async adoptSessions(ceiling, mine) {
      await ctx.watcher.ready;
      const boot = partitionBootPods(ctx.watcher.pods(), ctx.config.sessionPods);
      const current = await podsToAdopt(ctx, boot, mine, ceiling);
      const tokens = await Promise.all(current.map(({ pod, record }) => adoptedToken(ctx, pod, record.mode === "watch" ? "agent" : "app")));
      return current.map(({ pod, record, streams, claimed }, index) => {
        const token = tokens[index];
        const spec = { ...specFromRecord(record, pod, options.catalog), ...(token && { token }) };
        return adoptable(ctx, pod, spec, streams, claimed, watchOptions);
      });
    },

    async housekeep() {
      await ctx.watcher.ready;
      await housekeep(ctx, pool, partitionBootPods(ctx.watcher.pods(), ctx.config.sessionPods), options.sweepMinAgeMs);
    },

    dutiesLost: () => pool?.pause(),
    receivePoolClaim: (pod, answer) => pool?.receiveClaim(pod, answer) ?? false,

    async close() {
      pool?.stop();
      ctx.watcher.stop();
      options.picker?.stop();
    },
  };
}

/**
 * What no session explains goes: pods without a record or being deleted, pool pods when the pool
 * is off; the warm pool takes the rest of its pods; stale workspace ConfigMaps go after the pods
 * that mounted them. A session's older pods are its owner's to reap, at its takeover, never the
 * duties holder's: the session lives.
 */
async function housekeep(ctx: KubeContext, pool: WarmPool | undefined, boot: ReturnType<typeof partitionBootPods>, sweepMinAgeMs: number): Promise<void> {
  await reportMissingRuntimeClass(ctx);
  const { current } = newestPodPerSession(boot.adopt);
  // With the pool off, pods of an earlier pool are nobody's.
  await reapPods(ctx, [...boot.reap, ...(pool ? [] : boot.pool)]);
  pool?.adopt(boot.pool, claimedPoolPods({ adopt: current }));
  pool?.start();
  // After the reap, so that ConfigMaps only reaped pods mounted can go on the next boot at the latest.
  await Promise.all([sweepWorkspaceConfigMaps(ctx, sweepMinAgeMs), sweepTokenSecrets(ctx, sweepMinAgeMs)]);
}

/** The session pods that were pool pods once (a pod keeps its name when claimed). */
function claimedPoolPods(pods: { adopt: readonly AdoptablePod[] }): V1Pod[] {
  return pods.adopt.filter(({ pod }) => pod.metadata?.name?.startsWith(POOL_POD_PREFIX)).map(({ pod }) => pod);
}

/**
 * The probe (docs/kubernetes.md "Probe"). The answer's wording is the contract's; the cluster's own reason for a failure (RBAC, a
 * timeout, a refused connection) goes to the log, where an operator looks for it.
 */
async function probe(ctx: KubeContext): Promise<AvailabilityReport> {
  const namespace = ctx.config.sessionPods.namespace;
  try {
    await ctx.api.core.readNamespace({ name: namespace });
  } catch (readError) {
    try {
      await ctx.api.core.listNamespace();
    } catch (listError) {
      ctx.log.warn("probe: the Kubernetes API is not reachable", { namespace, reason: apiReason(listError), readReason: apiReason(readError) });
      return PROBE_API_UNREACHABLE;
    }
    // A read refused by RBAC while the list is allowed also lands here; the reason tells them apart.
    ctx.log.warn("probe: the session namespace could not be read", { namespace, reason: apiReason(readError) });
    return probeNamespaceMissing(namespace);
  }
  const runtimeClass = ctx.config.sessionPods.runtimeClass;
  if (runtimeClass && (await readRuntimeClass(ctx, runtimeClass)) === "missing") return probeRuntimeClassMissing(runtimeClass);
  return PROBE_READY;
}

/** A dry-run create of a pod naming RUNNER_RUNTIME_CLASS; see status/runtime-class.ts for what counts as missing. */
async function readRuntimeClass(ctx: KubeContext, name: string): Promise<RuntimeClassVerdict> {
  const namespace = ctx.config.sessionPods.namespace;
  const body = runtimeClassProbePod(name, ctx.config.sessionPods.initImage);
  try {
    await withDeadline(ctx.api.core.createNamespacedPod({ namespace, body, dryRun: "All" }), CALL_DEADLINE_MS, "the RuntimeClass check");
    return runtimeClassVerdict(name, undefined);
  } catch (error) {
    return runtimeClassVerdict(name, error);
  }
}

/** At boot (the backend's boot step): a missing RuntimeClass is said at once, not at the first session. */
async function reportMissingRuntimeClass(ctx: KubeContext): Promise<void> {
  const name = ctx.config.sessionPods.runtimeClass;
  if (!name || (await readRuntimeClass(ctx, name)) !== "missing") return;
  ctx.log.error(runtimeClassMissingMessage(name), { runtimeClass: name });
}

type AdoptablePod = { pod: V1Pod; record: SessionRecord };
/** A pod this owner has claimed: `streams` as the last owner left them; `claimed` whether this owner's ceiling is on it. */
type ClaimedPod = AdoptablePod & { streams: AdoptedStreams; claimed: boolean };

/** A session to take over from its pod, its streams continuing where the last owner left them (docs/replicas.md "Output across a handover"). */
function adoptable(ctx: KubeContext, pod: V1Pod, spec: StartSpec, streams: AdoptedStreams, claimed: boolean, watchOptions: { ttlSeconds: number }): AdoptableSession {
  return {
    spec,
    resume: (callbacks) =>
      spec.mode === "watch" ? new WatchSession(ctx, spec, callbacks, watchOptions).adopt(pod, streams) : new RunSession(ctx, spec, callbacks).adopt(pod, streams),
    ...(streams.saved && { streams: streams.saved }),
    claimed,
  };
}

/**
 * The newest pod of each session `mine` accepts (every session for one replica), each claimed; a
 * session's older pods are reaped here, by its owner.
 */
async function podsToAdopt(
  ctx: KubeContext,
  boot: ReturnType<typeof partitionBootPods>,
  mine: (sessionId: string) => boolean,
  ceiling: AdoptionCeiling,
): Promise<ClaimedPod[]> {
  const newest = newestPodPerSession(boot.adopt.filter(({ pod }) => mine(pod.metadata?.labels?.[LABEL.sessionId] ?? "")));
  const current = await claimedForAdoption(ctx, newest.current, ceiling);
  await reapPods(ctx, newest.superseded);
  return current;
}

/**
 * Each pod claimed with one write (stream-marks-calls.ts `claimStreams`): this owner's ceiling
 * and, among replicas, its term's stamp, so that the predecessor's writes fail from then on; a
 * pod already stamped with a newer term is another replica's, and its session is not adopted.
 * The session continues from the marks that write replaced, not the watch's copy: a watch a
 * moment behind would miss the marks the predecessor saved at its handover, and every client
 * would get a `gap`. The pods are read whole first, one list per 50 sessions: the watch keeps
 * trimmed copies (no init containers), and a replace made from one is refused with 422 ("pod
 * updates may not add or remove containers"). A claim that fails among replicas fails the
 * takeover, which the next period retries; one replica alone cannot retry its boot, so it takes
 * the session over and saves the ceiling later (no other process can hand out its ids meanwhile).
 */
async function claimedForAdoption(ctx: KubeContext, pods: AdoptablePod[], ceiling: AdoptionCeiling): Promise<ClaimedPod[]> {
  const read = await readPods(ctx, pods.map(({ record }) => record.sessionId));
  const claimed = await Promise.all(
    pods.map(async (candidate): Promise<ClaimedPod | undefined> => {
      const name = candidate.pod.metadata?.name ?? "";
      const apps = candidate.record.apps.map((app) => app.name);
      const unclaimed = { ...candidate, streams: adoptedStreams(candidate.pod), claimed: false };
      try {
        const claim = await claimStreams(ctx, name, read.get(name), (saved) => ceiling(saved, apps));
        return claim.stored && claim.streams ? { ...candidate, pod: claim.stored, streams: claim.streams, claimed: true } : unclaimed;
      } catch (error) {
        if (error instanceof SessionMoved) return undefined;
        if (!ctx.ownership.writerFor(candidate.record.sessionId)?.alone) throw error;
        ctx.log.warn("could not save the adopted session's stream ceiling; retrying", { sessionId: candidate.record.sessionId, error });
        return unclaimed;
      }
    }),
  );
  return claimed.filter((candidate) => candidate !== undefined);
}

/**
 * One pod per session: a watch session whose supervisor died while changing its app set can
 * have left its old pod beside the new one. The newest (by creation, then name) is the session's;
 * the others are reaped.
 */
function newestPodPerSession(pods: readonly AdoptablePod[]): { current: AdoptablePod[]; superseded: V1Pod[] } {
  const newest = new Map<string, AdoptablePod>();
  const superseded: V1Pod[] = [];
  const created = (pod: V1Pod) => (pod.metadata?.creationTimestamp ? new Date(pod.metadata.creationTimestamp).toISOString() : "");
  const key = ({ pod }: AdoptablePod) => `${created(pod)} ${pod.metadata?.name ?? ""}`;
  for (const candidate of pods) {
    const held = newest.get(candidate.record.sessionId);
    if (!held) newest.set(candidate.record.sessionId, candidate);
    else if (key(candidate) > key(held)) {
      superseded.push(held.pod);
      newest.set(candidate.record.sessionId, candidate);
    } else superseded.push(candidate.pod);
  }
  return { current: [...newest.values()], superseded };
}

/**
 * Rebuilds a session's launch description from its pod: the record says what the spec does
 * not, and the env values come from the container spec (the record keeps names only): the
 * `session` container of a run pod, an `app-*` container of a watch pod (the `workspace`
 * container gets no session env).
 */
function specFromRecord(record: SessionRecord, pod: V1Pod, catalog: AppsCatalog): StartSpec {
  const containers = pod.spec?.containers ?? [];
  const container =
    containers.find((candidate) => candidate.name === "session") ??
    containers.find((candidate) => candidate.name.startsWith(APP_CONTAINER_PREFIX)) ??
    containers[0];
  const values = new Map((container?.env ?? []).map((variable) => [variable.name, variable.value ?? ""]));
  const agent = record.agent !== undefined ? catalog.get(record.agent) : undefined;
  return {
    sessionId: record.sessionId,
    createdAt: record.createdAt,
    mode: record.mode,
    apps: record.apps,
    env: Object.fromEntries(record.envNames.map((name) => [name, values.get(name) ?? ""])),
    // A pod recorded without an image ran RUNNER_IMAGE as it was then: keep that image.
    config: namesTeloVersion(record) || record.config.image !== undefined || !container?.image ? record.config : { ...record.config, image: container.image },
    bundle: { entryRelativePath: record.apps[0]?.entryRelativePath ?? "", files: [] },
    inspect: record.inspect,
    selfContained: record.selfContained,
    ...(agent && { agent }),
  };
}

async function reapPods(ctx: KubeContext, pods: V1Pod[]): Promise<void> {
  const failures: { name: string; message: string }[] = [];
  await Promise.all(
    pods.map(async (pod) => {
      const name = pod.metadata?.name ?? "";
      try {
        await deletePod(ctx, name);
      } catch (error) {
        failures.push({ name, message: apiReason(error) });
      }
    }),
  );
  if (failures.length > 0) ctx.log.warn(reapFailureMessage(failures));
  if (pods.length > 0) ctx.log.info("reaped session pods no record explains", { count: pods.length - failures.length });
}

/**
 * At boot: delete this runner's workspace-app ConfigMaps neither the current manifest names nor any
 * pod of the namespace mounts (labelled or not). Housekeeping only: every failure is a warning.
 */
async function sweepWorkspaceConfigMaps(ctx: KubeContext, minAgeMs: number): Promise<void> {
  const stamp = ctx.config.sessionPods;
  const namespace = stamp.namespace;
  const [pods, configMaps] = await Promise.allSettled([
    ctx.api.core.listNamespacedPod({ namespace }),
    ctx.api.core.listNamespacedConfigMap({ namespace, labelSelector: ownedObjects(stamp).labelSelector }),
  ]);
  if (pods.status === "rejected" || configMaps.status === "rejected") {
    const error = pods.status === "rejected" ? pods.reason : (configMaps as PromiseRejectedResult).reason;
    ctx.log.warn("could not sweep workspace-app ConfigMaps", { reason: apiReason(error) });
    return;
  }
  const current = workspaceConfigMapName(WORKSPACE_APP_MANIFEST, stamp.ownerId);
  const stale = staleWorkspaceConfigMaps(settled(configMaps.value.items, Date.now(), minAgeMs), pods.value.items, current, stamp);
  let swept = 0;
  await Promise.all(
    stale.map(async (name) => {
      try {
        await ctx.api.core.deleteNamespacedConfigMap({ name, namespace });
        swept += 1;
      } catch (error) {
        if (isNotFound(error)) return;
        ctx.log.warn("failed to delete a stale workspace ConfigMap", { name, reason: apiReason(error) });
      }
    }),
  );
  if (swept > 0) ctx.log.info("swept stale workspace-app ConfigMaps", { count: swept });
}
