/**
 * The watch pod (docs/kubernetes.md "Watch pods"): a shared `/workspace`, the runner-owned `workspace`
 * container serving it on 8099, one `app-<name>` container per application running
 * `telo run --watch`, and optionally the co-resident `agent`.
 *
 * The env split is the credential boundary: operator (catalog) env only on `agent`, session env
 * only on `app-*`, neither on `workspace`. Every container gets the full app ceiling.
 */
import { withKernelNodeOptions } from "./kernel-env.ts";
import type { V1Container, V1Pod, V1VolumeMount } from "@kubernetes/client-node";
import type { KernelImageSettings, SessionPodSettings } from "../../config/kube.ts";
import { kernelImage } from "./kernel-image.ts";
import { containerResources, type Ceilings } from "./limits.ts";
import { appContainerName, watchPodLabels, watchPodName } from "./names.ts";
import { tokenEnvVar } from "./token-secret.ts";
import {
  containerPorts,
  envList,
  HARDENED_CONTAINER_SECURITY,
  HARDENED_POD_SECURITY,
  imagePullPolicy,
  OPERATOR_CONTAINER_SECURITY,
  sessionPodBasics,
  sessionPodMetadata,
  type SessionFacts,
} from "./pod-common.ts";
import type { CatalogEntry } from "../../config/apps-catalog.ts";
import type { ResolvedApp } from "../../contract/wire.ts";

export const WORKSPACE_PORT = 8099;
/** App i's inspector listens on 9230 + i: the containers share one network namespace. */
export const WATCH_INSPECT_BASE_PORT = 9230;
const WORKSPACE_APP_DIR = "/opt/telo-workspace";


export interface WatchPodInput {
  session: SessionFacts;
  /** Session env values, in order; only the app containers receive them. */
  env: Record<string, string>;
  settings: SessionPodSettings;
  /** The app ceilings, applied to every container. */
  limits: Ceilings;
  /** RUNNER_WATCH_MAX_TTL_SECONDS: one deadline for the whole pod. */
  ttlSeconds: number;
  /** RUNNER_IMAGE, for a session whose config names no image and no telo version. */
  defaultImage: string;
  /** The Telo-version image settings (RUNNER_TELO_*, RUNNER_PULL_POLICY); needed when an app names a version. */
  teloImages?: KernelImageSettings;
  /** Fresh per pod (re)creation: `watchPodSuffix(Date.now(), counter)`. */
  nameSuffix: string;
  /** `workspaceConfigMapName(manifest)`, ensured before the pod is created. */
  workspaceConfigMap: string;
  /** The co-resident agent's resolved catalog entry. */
  agent?: CatalogEntry;
  /** The agent's `tokenEnv`: the agent container reads the pod's token Secret under it. */
  agentTokenEnv?: string;
}

/** Per-container scratch space: one emptyDir each, split by subPath so containers do not share. */
function scratchMounts(owner: string): V1VolumeMount[] {
  return [
    { name: "work", mountPath: "/work", subPath: owner },
    { name: "home", mountPath: "/home/telo", subPath: owner },
    { name: "tmp", mountPath: "/tmp", subPath: owner },
  ];
}

const WORKSPACE_MOUNT: V1VolumeMount = { name: "workspace", mountPath: "/workspace" };

// The entry path reaches the shell only through $TELO_ENTRY, never interpolated into the script;
// the loop lets the runner seed the workspace after Running without a failed first load.
const APP_SCRIPT =
  'while [ ! -f "$TELO_ENTRY" ]; do sleep 0.2; done; exec telo run --watch --inspect "$TELO_INSPECT_ADDR" --no-open "$TELO_ENTRY"';

function appContainer(app: ResolvedApp, index: number, input: WatchPodInput): V1Container {
  const tty = app.io === "tty";
  return {
    name: appContainerName(app.name),
    ...kernelImage(input.session, app, { defaultImage: input.defaultImage, telo: input.teloImages }),
    workingDir: "/work",
    command: ["sh", "-c", APP_SCRIPT],
    // No TELO_CACHE_DIR: it would outrank the workspace marker that anchors the shared cache.
    env: [
      ...envList(withKernelNodeOptions(input.env)),
      { name: "HOME", value: "/home/telo" },
      { name: "npm_config_cache", value: "/home/telo/.npm" },
      { name: "npm_config_update_notifier", value: "false" },
      { name: "TELO_ENTRY", value: `/workspace/${app.entryRelativePath}` },
      { name: "TELO_INSPECT_ADDR", value: `0.0.0.0:${WATCH_INSPECT_BASE_PORT + index}` },
      ...(tty ? [{ name: "CLICOLOR_FORCE", value: "1" }] : []),
    ],
    stdin: true,
    stdinOnce: false,
    tty,
    ...containerPorts(app.ports),
    resources: containerResources(input.limits),
    volumeMounts: [WORKSPACE_MOUNT, ...scratchMounts(app.name)],
    securityContext: HARDENED_CONTAINER_SECURITY,
  };
}

function workspaceContainer(input: WatchPodInput): V1Container {
  return {
    name: "workspace",
    ...kernelImage(input.session, undefined, { defaultImage: input.defaultImage, telo: input.teloImages }),
    workingDir: "/work",
    command: ["telo", "run", `${WORKSPACE_APP_DIR}/telo.yaml`],
    env: [
      { name: "PORT", value: String(WORKSPACE_PORT) },
      { name: "WORKSPACE_DIR", value: "/workspace" },
      { name: "TELO_CACHE_DIR", value: "/telo-cache/workspace" },
      { name: "HOME", value: "/home/telo" },
      { name: "npm_config_cache", value: "/home/telo/.npm" },
      { name: "npm_config_update_notifier", value: "false" },
    ],
    ports: [{ containerPort: WORKSPACE_PORT, protocol: "TCP" }],
    resources: containerResources(input.limits),
    volumeMounts: [
      WORKSPACE_MOUNT,
      { name: "telo-cache", mountPath: "/telo-cache" },
      { name: "workspace-app", mountPath: WORKSPACE_APP_DIR, readOnly: true },
      ...scratchMounts("workspace"),
    ],
    securityContext: HARDENED_CONTAINER_SECURITY,
  };
}

/**
 * The image's own entrypoint; pod-level runAsNonRoot and uid 1000 constrain it too. Its token,
 * when it has one, comes from the pod's token Secret, never as a plain value.
 */
function agentContainer(agent: CatalogEntry, input: WatchPodInput): V1Container {
  const { limits, agentTokenEnv } = input;
  const plain = Object.fromEntries(Object.entries(agent.env).filter(([name]) => name !== agentTokenEnv));
  const podName = watchPodName(input.session.sessionId, input.nameSuffix);
  return {
    name: "agent",
    image: agent.image,
    imagePullPolicy: imagePullPolicy(agent.pullPolicy),
    env: [
      ...envList(plain),
      { name: "WORKSPACE_DIR", value: "/workspace" },
      { name: "CLICOLOR_FORCE", value: "1" },
      ...(agentTokenEnv !== undefined ? [tokenEnvVar(agentTokenEnv, podName)] : []),
    ],
    ...(agent.port !== undefined && { ports: [{ containerPort: agent.port, protocol: "TCP" }] }),
    resources: containerResources(limits),
    volumeMounts: [WORKSPACE_MOUNT, ...scratchMounts("agent")],
    securityContext: OPERATOR_CONTAINER_SECURITY,
  };
}

export function watchPod(input: WatchPodInput): V1Pod {
  const { session, settings } = input;
  return {
    apiVersion: "v1",
    kind: "Pod",
    metadata: sessionPodMetadata({
      name: watchPodName(session.sessionId, input.nameSuffix),
      settings,
      labels: watchPodLabels(settings, session.sessionId),
      session,
      env: input.env,
      agentName: input.agent?.name,
    }),
    spec: {
      ...sessionPodBasics(settings, input.ttlSeconds),
      securityContext: HARDENED_POD_SECURITY,
      containers: [
        workspaceContainer(input),
        ...session.apps.map((app, index) => appContainer(app, index, input)),
        ...(input.agent ? [agentContainer(input.agent, input)] : []),
      ],
      volumes: [
        ...["workspace", "telo-cache", "work", "home", "tmp"].map((name) => ({ name, emptyDir: {} })),
        { name: "workspace-app", configMap: { name: input.workspaceConfigMap } },
      ],
    },
  };
}
