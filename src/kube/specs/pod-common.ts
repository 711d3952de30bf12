/**
 * What every session pod shares (docs/kubernetes.md "Run pods", "Watch pods"): metadata carrying the
 * session record, the pod-level basics, the hardening blocks, env and port lists, image choice.
 */
import type {
  V1Container,
  V1ContainerPort,
  V1EnvVar,
  V1ObjectMeta,
  V1Pod,
  V1PodSecurityContext,
  V1PodSpec,
  V1SecurityContext,
} from "@kubernetes/client-node";
import type { SessionPodSettings } from "../../config/kube.ts";
import type { PortMapping, PullPolicy } from "../../contract/wire.ts";
import { runPodName, sessionLabels } from "./names.ts";
import { sessionRecordAnnotation, type SessionRecord } from "./session-record.ts";

/**
 * Everything a session pod's record says except what the builder derives from its own inputs:
 * the env names (from the env it writes) and the agent (from the agent entry it runs).
 */
export type SessionFacts = Omit<SessionRecord, "envNames" | "agent">;

export type ImagePullPolicy = "Always" | "IfNotPresent" | "Never";

/** The image of a container and how the kubelet refreshes it. */
export interface ContainerImage {
  image: string;
  imagePullPolicy: ImagePullPolicy;
}

/** `always` → Always, `never` → Never, anything else (`missing`, absent) → IfNotPresent. */
export function imagePullPolicy(policy: PullPolicy | undefined): ImagePullPolicy {
  if (policy === "always") return "Always";
  if (policy === "never") return "Never";
  return "IfNotPresent";
}

/** uid/gid 1000 is the kernel image's user; fsGroup lets every container write shared emptyDirs. */
export const HARDENED_POD_SECURITY: V1PodSecurityContext = {
  runAsNonRoot: true,
  runAsUser: 1000,
  runAsGroup: 1000,
  fsGroup: 1000,
  seccompProfile: { type: "RuntimeDefault" },
};

/** Runner-chosen images: every writable path is an emptyDir, so the root filesystem is read-only. */
export const HARDENED_CONTAINER_SECURITY: V1SecurityContext = {
  allowPrivilegeEscalation: false,
  readOnlyRootFilesystem: true,
  runAsNonRoot: true,
  capabilities: { drop: ["ALL"] },
};

/**
 * Operator images (catalog apps, the agent) may write to their own filesystem, so they relax
 * only the rootfs rule; non-root and seccomp come from the pod level.
 */
export const OPERATOR_CONTAINER_SECURITY: V1SecurityContext = {
  allowPrivilegeEscalation: false,
  capabilities: { drop: ["ALL"] },
};

/**
 * The `session` container of a run or app pod: an interactive terminal, and a failure's last
 * words from its log when it writes no termination message.
 */
export const SESSION_CONTAINER_IO = {
  stdin: true,
  stdinOnce: false,
  tty: true,
  terminationMessagePolicy: "FallbackToLogsOnError",
} as const satisfies Partial<V1Container>;

export function sessionPodMetadata(input: {
  name: string;
  settings: SessionPodSettings;
  labels: Record<string, string>;
  session: SessionFacts;
  env: Record<string, string>;
  agentName?: string;
}): V1ObjectMeta {
  return {
    name: input.name,
    namespace: input.settings.namespace,
    labels: input.labels,
    annotations: sessionRecordAnnotation({
      ...input.session,
      envNames: Object.keys(input.env),
      ...(input.agentName !== undefined && { agent: input.agentName }),
    }),
  };
}

/**
 * The pod-level fields every session pod has; pull secret and runtime class only when configured.
 * Service links are off: otherwise every session's Service would appear as `<NAME>_SERVICE_HOST`
 * env in every later session pod, telling one session where its neighbours listen.
 */
export function sessionPodBasics(settings: SessionPodSettings, ttlSeconds: number): Omit<V1PodSpec, "containers"> {
  return {
    restartPolicy: "Never",
    activeDeadlineSeconds: ttlSeconds,
    automountServiceAccountToken: false,
    enableServiceLinks: false,
    ...(settings.imagePullSecret && { imagePullSecrets: [{ name: settings.imagePullSecret }] }),
    ...(settings.runtimeClass && { runtimeClassName: settings.runtimeClass }),
  };
}

/** A run or app session's one pod: named for the session, its record on it, the basics beside `spec`. */
export function runSessionPod(
  input: { session: SessionFacts; settings: SessionPodSettings; env: Record<string, string>; ttlSeconds: number },
  spec: V1PodSpec,
): V1Pod {
  const { session, settings } = input;
  return {
    apiVersion: "v1",
    kind: "Pod",
    metadata: sessionPodMetadata({
      name: runPodName(session.sessionId),
      settings,
      labels: sessionLabels(settings, session.sessionId),
      session,
      env: input.env,
    }),
    spec: { ...sessionPodBasics(settings, input.ttlSeconds), ...spec },
  };
}

/** Env in insertion order. */
export function envList(env: Record<string, string>): V1EnvVar[] {
  return Object.entries(env).map(([name, value]) => ({ name, value }));
}

/** Declared ports, as documentation on the container; no `ports` field at all when none. */
export function containerPorts(ports: readonly PortMapping[]): Pick<V1Container, "ports"> {
  if (ports.length === 0) return {};
  const list: V1ContainerPort[] = ports.map(({ port, protocol }) => ({
    containerPort: port,
    protocol: protocol === "udp" ? "UDP" : "TCP",
  }));
  return { ports: list };
}
