/**
 * The Kubernetes backend (issue #4): sessions as pods in the session namespace, followed by
 * one shared pod watch; probe, capabilities and the config gate; and at boot, the re-adoption
 * of session pods an earlier supervisor left running.
 */
import type { V1Pod } from "@kubernetes/client-node";
import type { AppsCatalog } from "../config/apps-catalog.ts";
import type { AdoptableSession, Backend, StartSpec } from "../sessions/backend.ts";
import { SessionStartError } from "../sessions/backend.ts";
import type { KubeContext } from "./context.ts";
import { partitionBootPods, reapFailureMessage } from "./boot-housekeeping.ts";
import type { ImagePicker } from "./image-picker.ts";
import { notOfferedMessage } from "./image-catalog.ts";
import { RunSession } from "./run-session.ts";
import type { SessionRecord } from "./specs/session-record.ts";
import { apiReason, isNotFound } from "./status/api-error.ts";
import { PROBE_API_UNREACHABLE, PROBE_READY, probeNamespaceMissing } from "./status/probe.ts";

const PULL_POLICY_DESCRIPTION =
  "Kernel-image freshness, applied as the Pod's imagePullPolicy. `always` re-pulls on every session, so a moving tag like `latest-slim` picks up a new release. `missing` pulls only when the node has no copy. `never` never pulls at all — on a node that has not already cached the image the session fails to start (ErrImageNeverPull), so it suits a cluster that pre-loads its images and nothing else.";

export function createKubeBackend(ctx: KubeContext, options: { picker: ImagePicker | undefined; catalog: AppsCatalog }): Backend {
  const { config } = ctx;
  const namespace = config.sessionPods.namespace;

  return {
    describe: () => ({
      displayName: config.RUNNER_DISPLAY_NAME,
      description: config.RUNNER_DESCRIPTION,
      io: ["tty", "streams"],
      ports: true,
      config: {
        imageDefault: config.RUNNER_IMAGE,
        ...(options.picker && { imageEnum: options.picker.offered() }),
        enforced: true,
        pullPolicyDescription: PULL_POLICY_DESCRIPTION,
        registryUrl: false,
      },
    }),

    validateConfig(sessionConfig) {
      const offered = options.picker?.offered();
      if (offered && !offered.includes(sessionConfig.image)) return notOfferedMessage(sessionConfig.image, offered);
      return undefined;
    },

    async probe() {
      try {
        await ctx.api.core.readNamespace({ name: namespace });
        return PROBE_READY;
      } catch {
        try {
          await ctx.api.core.listNamespace();
          return probeNamespaceMissing(namespace);
        } catch {
          return PROBE_API_UNREACHABLE;
        }
      }
    },

    async start(spec, callbacks) {
      if (spec.mode === "watch") {
        throw new SessionStartError("create", "watch sessions are not available in this runner's Kubernetes backend yet");
      }
      return new RunSession(ctx, spec, callbacks).start();
    },

    async adoptSessions() {
      await ctx.watcher.ready;
      const { adopt, reap } = partitionBootPods(ctx.watcher.pods());
      const runSessions = adopt.filter(({ record }) => record.mode === "run");
      // This backend does not run watch sessions, so no record of one can be honoured.
      const watchPods = adopt.filter(({ record }) => record.mode !== "run").map(({ pod }) => pod);
      await reapPods(ctx, [...reap, ...watchPods]);
      return runSessions.map(({ pod, record }): AdoptableSession => {
        const spec = specFromRecord(record, pod, options.catalog);
        return { spec, resume: (callbacks) => new RunSession(ctx, spec, callbacks).adopt(pod) };
      });
    },

    async close() {
      ctx.watcher.stop();
      options.picker?.stop();
    },
  };
}

/**
 * Rebuilds a session's launch description from its pod: the record says what the spec does
 * not, and the env values come from the container spec (the record keeps names only).
 */
function specFromRecord(record: SessionRecord, pod: V1Pod, catalog: AppsCatalog): StartSpec {
  const container = pod.spec?.containers?.find((candidate) => candidate.name === "session") ?? pod.spec?.containers?.[0];
  const values = new Map((container?.env ?? []).map((variable) => [variable.name, variable.value ?? ""]));
  const agent = record.agent !== undefined ? catalog.get(record.agent) : undefined;
  return {
    sessionId: record.sessionId,
    createdAt: record.createdAt,
    mode: record.mode,
    apps: record.apps,
    env: Object.fromEntries(record.envNames.map((name) => [name, values.get(name) ?? ""])),
    config: {
      image: record.config.image ?? container?.image ?? "",
      pullPolicy: record.config.pullPolicy ?? "missing",
    },
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
        await ctx.api.core.deleteNamespacedPod({ name, namespace: ctx.config.sessionPods.namespace, gracePeriodSeconds: 0 });
      } catch (error) {
        if (!isNotFound(error)) failures.push({ name, message: apiReason(error) });
      }
    }),
  );
  if (failures.length > 0) ctx.log.warn(reapFailureMessage(failures));
  if (pods.length > 0) ctx.log.info("reaped session pods no record explains", { count: pods.length - failures.length });
}
