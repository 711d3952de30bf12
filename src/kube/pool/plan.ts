/**
 * The warm pool's decisions, as pure functions over what the pod watch shows (docs/kubernetes.md "Warm pool"): which
 * sessions a pool pod can serve, and what the pool must do now (pods to remove, pods to create,
 * pods a claim may take).
 */
import type { V1Pod } from "@kubernetes/client-node";
import type { StartSpec } from "../../sessions/backend-seam.ts";
import { LABEL } from "../specs/names.ts";
import type { KernelImageSettings } from "../../config/kube.ts";
import { kernelImage } from "../specs/kernel-image.ts";
import { SHELL_NAME } from "../specs/pool-pod.ts";

export interface ServeInput {
  /** RUNNER_IMAGE: the pool's image. */
  defaultImage: string;
  /** How a session naming a Telo version chooses its image. */
  teloImages?: KernelImageSettings;
  /** The image build path is on: every session runs an image built for it. */
  building: boolean;
}

/**
 * Why a pool pod cannot be this session's pod, or undefined when it can. A claimed pod must be
 * the pod a cold start would create but for its name, init container and pool volume: same
 * image and pull policy, same ceilings (the run ceilings: no request can change them today),
 * env a shell can export. Its container ports differ (a pool pod declares none, and a pod's
 * ports cannot change after creation) and need not match: containerPort is informational, the
 * session Service targets each declared port by number, and reachability dials the pod's IP.
 */
export function coldReason(spec: StartSpec, input: ServeInput): string | undefined {
  if (spec.mode !== "run") return "a watch session runs a watch pod";
  // A pool pod's spec cannot gain the secretKeyRef, and its claim answer must not carry a credential.
  if (spec.token) return "a session with a workload token reads it from a Secret its pod names";
  if (spec.selfContained) return "a predefined app runs its own image";
  if (spec.agent) return "a session with an agent runs an agent container";
  if (input.building) return "the image build path runs an image built for the session";
  const app = spec.apps[0];
  if (!app || spec.apps.length !== 1) return "a run session has exactly one app";
  // The pool holds RUNNER_IMAGE only: a version naming another image starts cold.
  const wanted = kernelImage(spec, app, { defaultImage: input.defaultImage, telo: input.teloImages });
  const pool = input.defaultImage;
  if (app.telo !== undefined && wanted.image !== pool) return `telo ${app.telo} runs ${wanted.image}, not the pool's image (${pool})`;
  if (wanted.image !== pool) return `the image ${wanted.image} is not the pool's (${pool})`;
  const policy = app.telo !== undefined ? input.teloImages?.teloPullPolicy : spec.config.pullPolicy;
  if (wanted.imagePullPolicy !== "IfNotPresent") return `pull policy '${policy}' is not the pool's ('missing')`;
  const unexportable = Object.keys(spec.env).find((name) => !SHELL_NAME.test(name));
  if (unexportable !== undefined) return `the env name '${unexportable}' is not one a shell can export`;
  return undefined;
}

/** A pool pod as the plan sees it. */
export interface PoolPodView {
  name: string;
  createdAt: number;
  deleting: boolean;
  ended: boolean;
  /** Running with its container started: the waiting shell runs. */
  running: boolean;
  /** Its shell has polled this supervisor's claim route (among replicas: its maker is live and answers it). */
  polled: boolean;
  /** Among replicas, its maker is no live member: no one can answer its claim, so it is replaced. */
  orphaned?: boolean;
}

export function poolPodView(pod: V1Pod, polled: boolean, orphaned = false): PoolPodView {
  const phase = pod.status?.phase;
  const created = pod.metadata?.creationTimestamp;
  return {
    name: pod.metadata?.name ?? "",
    createdAt: created ? new Date(created).getTime() : 0,
    deleting: pod.metadata?.deletionTimestamp !== undefined,
    ended: phase === "Succeeded" || phase === "Failed",
    running: phase === "Running" && (pod.status?.containerStatuses ?? []).some((status) => status.name === "session" && status.state?.running !== undefined),
    polled,
    ...(orphaned && { orphaned }),
  };
}

/**
 * Among replicas, how a pool pod stands by the replica that made it (its maker label): `mine`,
 * `peer` (a live member, which answers the pod's polls and takes a claim's answer over the peer
 * link), or `gone` (no live member holds its token: its claim could never be answered). A pod
 * with no maker was made by a single runner before it became several replicas: gone too.
 */
export type MakerStanding = "mine" | "peer" | "gone";

export function makerStanding(pod: V1Pod, self: string, live: ReadonlySet<string>): MakerStanding {
  const maker = pod.metadata?.labels?.[LABEL.poolMaker];
  if (maker === undefined) return "gone";
  if (maker === self) return "mine";
  return live.has(maker) ? "peer" : "gone";
}

/** An unclaimed pool pod: the pool label, no session yet. */
export function isPoolPod(pod: V1Pod): boolean {
  return pod.metadata?.labels?.[LABEL.pool] === "true";
}

export interface PlanInput {
  size: number;
  maxIdleMs: number;
  now: number;
  /** Creates sent and not yet seen by the watch. */
  creating: number;
  /** Pods a claim is taking or took (the watch may not show it yet). */
  claimed: ReadonlySet<string>;
}

export interface PoolPlan {
  /** Ended pods, idle ones past their age, and orphaned ones: delete. */
  remove: string[];
  /** How many pods to create now. */
  create: number;
  /** Pods a claim may take, oldest first (the next to be replaced anyway). */
  claimable: string[];
  /** Unclaimed pods that stay: the claimable ones and those still starting. */
  live: number;
  /** When the next idle pod reaches its age; undefined with none. */
  nextExpiry: number | undefined;
}

export function planPool(pods: readonly PoolPodView[], input: PlanInput): PoolPlan {
  const remove: string[] = [];
  const live: PoolPodView[] = [];
  for (const pod of pods) {
    if (pod.deleting || input.claimed.has(pod.name)) continue;
    if (pod.ended || pod.orphaned === true || input.now - pod.createdAt >= input.maxIdleMs) remove.push(pod.name);
    else live.push(pod);
  }
  live.sort((a, b) => a.createdAt - b.createdAt || (a.name < b.name ? -1 : 1));
  return {
    remove,
    create: Math.max(0, input.size - live.length - input.creating),
    claimable: live.filter((pod) => pod.running && pod.polled).map((pod) => pod.name),
    live: live.length,
    nextExpiry: live.length > 0 ? live[0]!.createdAt + input.maxIdleMs : undefined,
  };
}
