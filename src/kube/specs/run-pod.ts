/**
 * The run pod (docs/kubernetes.md "Run pods"): one `session` container running `telo run` on the bundle
 * that the `body-fetch` init container downloads from the runner's bundle listener.
 *
 * Two image deliveries (docs/kubernetes.md "Image delivery"): the plain kernel image resolving its modules in-pod
 * into a `telo-cache` emptyDir, or, on the build path (docs/kubernetes.md "Image builds"), the built image whose modules
 * were installed into its own `/telo-cache` at build time — there the emptyDir would hide
 * them, so the cache stays the image's read-only layer and telo is told not to write to it.
 */
import { withKernelNodeOptions } from "./kernel-env.ts";
import type { V1Container, V1EnvVar, V1Pod, V1VolumeMount } from "@kubernetes/client-node";
import type { KernelImageSettings, SessionPodSettings } from "../../config/kube.ts";
import { kernelImage } from "./kernel-image.ts";
import { fetchInitContainer } from "./fetch-init.ts";
import { containerResources, type Ceilings } from "./limits.ts";
import {
  containerPorts,
  envList,
  HARDENED_CONTAINER_SECURITY,
  HARDENED_POD_SECURITY,
  runSessionPod,
  SESSION_CONTAINER_IO,
  type ContainerImage,
  type SessionFacts,
} from "./pod-common.ts";

/** Where the inspector listens inside the pod; reached over the pod network, never routed. */
export const RUN_INSPECT_PORT = 9230;

export interface RunPodInput {
  session: SessionFacts;
  /** Session env values, in order; their names go into the session record. */
  env: Record<string, string>;
  settings: SessionPodSettings;
  /** The run ceilings after `clampLimits`. */
  limits: Ceilings;
  /** RUNNER_IMAGE, for a session whose config names no image and no telo version. */
  defaultImage: string;
  /** The Telo-version image settings (RUNNER_TELO_*, RUNNER_PULL_POLICY); needed when an app names a version. */
  teloImages?: KernelImageSettings;
  /** `<repository>:<tag>` when the build path built this session's image. */
  builtImage?: string;
  /** Single-use bundle URL from the bundle store. */
  bundleUrl: string;
}

/** docs/kubernetes.md "Image delivery" / docs/kubernetes.md "Image builds": a built image is content-addressed, so the node's copy is always right. */
function runContainerImage(input: Pick<RunPodInput, "session" | "defaultImage" | "teloImages" | "builtImage">): ContainerImage {
  if (input.builtImage) return { image: input.builtImage, imagePullPolicy: "IfNotPresent" };
  return kernelImage(input.session, input.session.apps[0], { defaultImage: input.defaultImage, telo: input.teloImages });
}

/** Options precede the manifest path: everything after the path belongs to the application. */
export function runCommand(entry: string, inspect: boolean, built: boolean): string[] {
  return [
    "telo",
    "run",
    ...(built ? ["--no-cache-write"] : []),
    ...(inspect ? ["--inspect", `0.0.0.0:${RUN_INSPECT_PORT}`, "--no-open"] : []),
    `/app/${entry}`,
  ];
}

function mount(name: string, mountPath: string): V1VolumeMount {
  return { name, mountPath };
}

/** Every writable path of the kernel container is an emptyDir of its own; a built image keeps its cache. */
export function kernelMounts(built: boolean): V1VolumeMount[] {
  return [
    mount("app", "/app"),
    ...(built ? [] : [mount("telo-cache", "/telo-cache")]),
    mount("work", "/work"),
    mount("home", "/home/telo"),
    mount("tmp", "/tmp"),
  ];
}

/** The env the runner gives every kernel, after the session's own (so these win a clash). */
export const KERNEL_ENV: readonly V1EnvVar[] = [
  { name: "TELO_CACHE_DIR", value: "/telo-cache" },
  { name: "HOME", value: "/home/telo" },
  { name: "npm_config_cache", value: "/home/telo/.npm" },
  // npm's update check waits on DNS for a registry the pod may not reach, delaying the kernel's start.
  { name: "npm_config_update_notifier", value: "false" },
  { name: "FORCE_COLOR", value: "1" },
];

export function runPod(input: RunPodInput): V1Pod {
  const { session, settings } = input;
  const app = session.apps[0];
  if (!app) throw new Error("a run session has exactly one app");
  const built = input.builtImage !== undefined;
  // The volumes are exactly these mounts.
  const mounts = kernelMounts(built);

  const bodyFetch = fetchInitContainer({
    name: "body-fetch",
    image: settings.initImage,
    url: input.bundleUrl,
    volume: "app",
    mountPath: "/app",
    securityContext: HARDENED_CONTAINER_SECURITY,
  });

  const sessionContainer: V1Container = {
    name: "session",
    ...runContainerImage(input),
    workingDir: "/work",
    command: runCommand(app.entryRelativePath, session.inspect, built),
    env: [...envList(withKernelNodeOptions(input.env)), ...KERNEL_ENV],
    ...SESSION_CONTAINER_IO,
    ...containerPorts(app.ports),
    resources: containerResources(input.limits),
    volumeMounts: mounts,
    securityContext: HARDENED_CONTAINER_SECURITY,
  };

  return runSessionPod(
    { session, settings, env: input.env, ttlSeconds: input.limits.ttlSeconds },
    {
      securityContext: HARDENED_POD_SECURITY,
      initContainers: [bodyFetch],
      containers: [sessionContainer],
      volumes: mounts.map(({ name }) => ({ name, emptyDir: {} })),
    },
  );
}
