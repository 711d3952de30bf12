/**
 * The predefined-app pod (docs/kubernetes.md "Run pods"): a catalog image run by its own entrypoint, with no
 * bundle, no init container and no volumes.
 *
 * Deviation from the reference, which set only `seccompProfile` at pod level: the session
 * namespace enforces the `restricted` Pod Security profile, which also requires
 * `runAsNonRoot`, so such a pod would be refused (403). The pod asserts `runAsNonRoot: true`
 * but sets no uid: the image's own (numeric, non-root) USER applies. A catalog image that runs
 * as root, or names its user by name, fails at container start (CreateContainerConfigError),
 * which the failure message reports.
 */
import type { V1Container, V1Pod } from "@kubernetes/client-node";
import type { KernelImageSettings, SessionPodSettings } from "../../config/kube.ts";
import { kernelImage } from "./kernel-image.ts";
import { runPodName } from "./names.ts";
import { tokenEnvVar } from "./token-secret.ts";
import { containerResources, type Ceilings } from "./limits.ts";
import {
  containerPorts,
  envList,
  OPERATOR_CONTAINER_SECURITY,
  runSessionPod,
  SESSION_CONTAINER_IO,
  type SessionFacts,
} from "./pod-common.ts";

export interface AppPodInput {
  session: SessionFacts;
  /** The catalog entry's env merged with the session's (operator values win), in order. */
  env: Record<string, string>;
  settings: SessionPodSettings;
  /** The app ceilings after `clampLimits`. */
  limits: Ceilings;
  /** RUNNER_IMAGE, for a session whose config names no image and no telo version. */
  defaultImage: string;
  /** The Telo-version image settings (RUNNER_TELO_*, RUNNER_PULL_POLICY); needed when an app names a version. */
  teloImages?: KernelImageSettings;
  /** The catalog entry's `tokenEnv`: the container reads the session's token Secret under it. */
  tokenEnv?: string;
}

export function appPod(input: AppPodInput): V1Pod {
  const { session, settings } = input;
  const app = session.apps[0];
  if (!app) throw new Error("an app session has exactly one app");

  const sessionContainer: V1Container = {
    name: "session",
    ...kernelImage(session, app, { defaultImage: input.defaultImage, telo: input.teloImages }),
    env: [
      ...envList(input.env),
      { name: "FORCE_COLOR", value: "1" },
      ...(input.tokenEnv !== undefined ? [tokenEnvVar(input.tokenEnv, runPodName(session.sessionId))] : []),
    ],
    ...SESSION_CONTAINER_IO,
    ...containerPorts(app.ports),
    resources: containerResources(input.limits),
    securityContext: OPERATOR_CONTAINER_SECURITY,
  };

  return runSessionPod(
    { session, settings, env: input.env, ttlSeconds: input.limits.ttlSeconds },
    { securityContext: { runAsNonRoot: true, seccompProfile: { type: "RuntimeDefault" } }, containers: [sessionContainer] },
  );
}
