/**
 * Which image runs a kernel container, and how the kubelet refreshes it (docs/telo-versions.md):
 * an app naming Telo version V runs `<RUNNER_TELO_IMAGE_REPOSITORY>:<V>-<RUNNER_TELO_IMAGE_VARIANT>`
 * (an unreleased identity RUNNER_TELO_UNRELEASED_IMAGE); any other the config's image, else
 * RUNNER_IMAGE. Every container of a session naming a version, the watch pod's `workspace`
 * container included, is pulled by RUNNER_PULL_POLICY; otherwise by `config.pullPolicy`.
 */
import type { KernelImageSettings } from "../../config/kube.ts";
import { isUnreleased } from "../../contract/telo-version.ts";
import type { ResolvedApp } from "../../contract/wire.ts";
import { type ContainerImage, imagePullPolicy } from "./pod-common.ts";
import type { SessionRecord } from "./session-record.ts";

type ImageInputs = Pick<SessionRecord, "config" | "apps">;

/** What a pod builder knows of images: RUNNER_IMAGE, and the version settings when a session names one. */
export type PodImages = { defaultImage: string; telo?: KernelImageSettings | undefined };

/** An image tag holds no `+`: build metadata is written after `_`, as registries commonly do. */
export function teloImage(version: string, settings: KernelImageSettings): string {
  if (isUnreleased(version)) {
    // Admission refuses an unreleased version when no image stands in for it.
    if (!settings.unreleasedImage) throw new Error(`no image for the unreleased telo ${version}`);
    return settings.unreleasedImage;
  }
  return `${settings.teloRepository}:${version.replace("+", "_")}-${settings.teloVariant}`;
}

export function namesTeloVersion(session: Pick<SessionRecord, "apps">): boolean {
  return session.apps.some((app) => app.telo !== undefined);
}

/** The image of `app`'s kernel, or of a container running the session's plain kernel (`workspace`) when undefined. */
export function kernelImage(session: ImageInputs, app: ResolvedApp | undefined, images: PodImages): ContainerImage {
  if (!namesTeloVersion(session)) {
    return { image: session.config.image ?? images.defaultImage, imagePullPolicy: imagePullPolicy(session.config.pullPolicy) };
  }
  const settings = images.telo;
  if (!settings) throw new Error("a session naming a telo version needs the version image settings");
  const image = app?.telo !== undefined ? teloImage(app.telo, settings) : (session.config.image ?? images.defaultImage);
  return { image, imagePullPolicy: imagePullPolicy(settings.teloPullPolicy) };
}
