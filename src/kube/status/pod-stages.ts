/**
 * The stages of a session pod's start that its status shows (docs/kubernetes.md "The start's
 * timeline"). Pure, the clock passed in. Most are dated by the pod's own status, so a restarted
 * supervisor that adopts the pod reads the same times again; the image pull is not (see below).
 */
import type { V1ContainerStatus, V1Pod } from "@kubernetes/client-node";
import type { TimelineEntry } from "../../contract/wire.ts";

/** What the status holds as a time: a Date from the client's models, a string off the watch. */
function iso(value: Date | string | undefined): string | undefined {
  if (value === undefined) return undefined;
  const time = new Date(value);
  return Number.isNaN(time.getTime()) ? undefined : time.toISOString();
}

function scheduled(pod: V1Pod): TimelineEntry[] {
  const condition = pod.status?.conditions?.find((each) => each.type === "PodScheduled" && each.status === "True");
  const at = iso(condition?.lastTransitionTime);
  return at === undefined ? [] : [{ stage: "scheduled", at, ...(pod.spec?.nodeName && { detail: `on ${pod.spec.nodeName}` }) }];
}

/** The init containers fetch the application: all of them done is the bundle delivered. */
function bundleDelivered(pod: V1Pod): TimelineEntry[] {
  const inits = pod.status?.initContainerStatuses ?? [];
  if (inits.length === 0 || inits.length < (pod.spec?.initContainers?.length ?? 0)) return [];
  const finished = inits.map((status) => (status.state?.terminated?.exitCode === 0 ? iso(status.state.terminated.finishedAt) : undefined));
  if (finished.some((at) => at === undefined)) return [];
  const at = (finished as string[]).sort().at(-1)!;
  return [{ stage: "bundle-delivered", at }];
}

function startedAt(status: V1ContainerStatus | undefined): string | undefined {
  return iso(status?.state?.running?.startedAt ?? status?.state?.terminated?.startedAt);
}

/**
 * The pod's status dates no pull (its Events do, which the runner does not read): the kubelet
 * fills the container's `imageID` once the image is on the node, so the pull is dated by the
 * read that first shows one, and never after the container's start, which needed the image.
 */
function imagePulled(status: V1ContainerStatus | undefined, now: number): TimelineEntry[] {
  if (!status?.imageID) return [];
  const started = startedAt(status);
  const at = started !== undefined && Date.parse(started) < now ? started : new Date(now).toISOString();
  return [{ stage: "image-pulled", at, detail: status.image }];
}

/** Every stage `pod` shows of the start of `container` (the kernel's), as of `now`. */
export function podStages(pod: V1Pod, container: string, now: number): TimelineEntry[] {
  const kernel = pod.status?.containerStatuses?.find((status) => status.name === container);
  const started = startedAt(kernel);
  return [
    ...scheduled(pod),
    ...bundleDelivered(pod),
    ...imagePulled(kernel, now),
    ...(started === undefined ? [] : [{ stage: "container-started" as const, at: started }]),
  ];
}
