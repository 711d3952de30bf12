/**
 * The warm pool (docs/kubernetes.md "Warm pool"): a run pod started before its session, and what turns it into one.
 *
 * A pool pod is a cold run pod (run-pod.ts) with the session left out: the same hardening, the
 * default kernel image, the run ceilings, the same volumes, the same `session` container with
 * its terminal and kernel env. It holds no session data, and cannot: it is created before any
 * session exists. Its container runs busybox's `sh` (copied by an init container from the init
 * image into the `pool` emptyDir, because the kernel image may have no shell) with a script that
 * long-polls the bundle listener for its claim. The claim is a script of the runner's
 * (`claimScript`): fetch and unpack the session's bundle through the single-use bundle route a
 * cold start uses, export the session env, remove every claim file, and `exec` the kernel with
 * the cold start's command line. Bundle and env values thus reach the pod only at claim time,
 * over the bundle listener, never through the spec, an annotation, a label or a log line.
 *
 * The claim itself (`claimedPod`, an update) rewrites the pod's record so that it is the session's pod as
 * far as the engine, re-adoption and reaping can tell: the session's labels and record
 * annotation, and the session's TTL from now as `activeDeadlineSeconds` (which an update may
 * lower, never raise: hence the pool pod's own deadline covers the idle age and a TTL).
 */
import { withKernelNodeOptions } from "./kernel-env.ts";
import type { V1Container, V1Pod } from "@kubernetes/client-node";
import type { SessionPodSettings } from "../../config/kube.ts";
import { FETCH_INIT_CONTAINER_RESOURCES, containerResources, type Ceilings } from "./limits.ts";
import { poolLabels, sessionLabels } from "./names.ts";
import { HARDENED_CONTAINER_SECURITY, HARDENED_POD_SECURITY, SESSION_CONTAINER_IO, sessionPodBasics, sessionPodMetadata } from "./pod-common.ts";
import { KERNEL_ENV, kernelMounts, runCommand, type RunPodInput } from "./run-pod.ts";

/** Where the pod's own busybox lives; the session container mounts it read-only. */
const BUSYBOX = "/pool/busybox";
/** The init image's busybox (Debian's busybox-static and the busybox image both have it there). */
const INIT_BUSYBOX = "/bin/busybox";
/** The claim answer, sourced by the waiting shell; the claim removes it first thing. */
const CLAIM_FILE = "/tmp/claim";
const BUNDLE_FILE = "/tmp/bundle.tgz";
/** The claim route's URL reaches the shell through the env, never interpolated into the script. */
export const CLAIM_URL_ENV = "CLAIM_URL";

/**
 * Poll, and poll again after a second when the listener is away (a supervisor restart) or
 * answers "not yet"; errors go to /dev/null because the pod log becomes the session's output.
 */
export const WAIT_SCRIPT = [
  `until ${BUSYBOX} wget -q -O ${CLAIM_FILE} "$${CLAIM_URL_ENV}" 2>/dev/null; do ${BUSYBOX} sleep 1; done`,
  `. ${CLAIM_FILE}`,
].join("\n");

export interface PoolPodInput {
  name: string;
  settings: SessionPodSettings;
  /** The run ceilings after `clampLimits`: a claim serves only sessions that get exactly these. */
  limits: Ceilings;
  /** RUNNER_IMAGE. */
  defaultImage: string;
  /** The pod's claim route on the bundle listener, with its token. */
  claimUrl: string;
  /** RUNNER_WARM_POOL_MAX_IDLE_SECONDS. */
  maxIdleSeconds: number;
  /** Among replicas, the identity of the replica making it (the one its claim URL reaches). */
  maker?: string | undefined;
}

/**
 * An unclaimed pod outlives its replacement age by at most a TTL, so that one left by a runner
 * that never comes back still ends; the margin covers the replacement's own lag.
 */
export function poolPodDeadlineSeconds(maxIdleSeconds: number, ttlSeconds: number): number {
  return maxIdleSeconds + ttlSeconds + 60;
}

export function poolPod(input: PoolPodInput): V1Pod {
  const { settings } = input;
  const mounts = kernelMounts(false);
  const copyShell: V1Container = {
    name: "pool-shell",
    image: settings.initImage,
    command: ["cp", INIT_BUSYBOX, BUSYBOX],
    resources: FETCH_INIT_CONTAINER_RESOURCES,
    volumeMounts: [{ name: "pool", mountPath: "/pool" }],
    securityContext: HARDENED_CONTAINER_SECURITY,
  };
  const waiting: V1Container = {
    name: "session",
    image: input.defaultImage,
    imagePullPolicy: "IfNotPresent",
    workingDir: "/work",
    command: [BUSYBOX, "sh", "-c", WAIT_SCRIPT],
    env: [...KERNEL_ENV, { name: CLAIM_URL_ENV, value: input.claimUrl }],
    ...SESSION_CONTAINER_IO,
    resources: containerResources(input.limits),
    volumeMounts: [...mounts, { name: "pool", mountPath: "/pool", readOnly: true }],
    securityContext: HARDENED_CONTAINER_SECURITY,
  };
  return {
    apiVersion: "v1",
    kind: "Pod",
    metadata: { name: input.name, namespace: settings.namespace, labels: poolLabels(settings, input.maker) },
    spec: {
      ...sessionPodBasics(settings, poolPodDeadlineSeconds(input.maxIdleSeconds, input.limits.ttlSeconds)),
      securityContext: HARDENED_POD_SECURITY,
      initContainers: [copyShell],
      containers: [waiting],
      volumes: [...mounts, { name: "pool" }].map(({ name }) => ({ name, emptyDir: {} })),
    },
  };
}

/** The claim route's URL a pool pod polls, read back from its spec (a restarted supervisor adopting it). */
export function poolClaimUrl(pod: V1Pod): string | undefined {
  const container = pod.spec?.containers?.find((candidate) => candidate.name === "session");
  return container?.env?.find((variable) => variable.name === CLAIM_URL_ENV)?.value;
}

/** One shell word whatever it holds: single quotes, and `'\''` for a quote inside. */
export function shellQuote(word: string): string {
  return `'${word.replaceAll("'", `'\\''`)}'`;
}

/** What `export` can set: a shell name. Other env names (`a.b`, `x-y`) make the session start cold. */
export const SHELL_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;

export interface ClaimInput {
  /** The session's single-use bundle URL from the bundle store. */
  bundleUrl: string;
  /** The session env, in order. */
  env: Record<string, string>;
  entryRelativePath: string;
  inspect: boolean;
}

/**
 * The claim answer the waiting shell sources: exactly what a cold start gives the kernel. The
 * files come through the same route and tar as body-fetch; the session env is exported but for
 * names the kernel env already sets, which win in a cold pod too (the later duplicate does);
 * the claim URL leaves the env; the command line is the cold one. Every value is a quoted word.
 */
export function claimScript(input: ClaimInput): string {
  const kernelNames = new Set(KERNEL_ENV.map(({ name }) => name));
  const exports = Object.entries(withKernelNodeOptions(input.env))
    .filter(([name]) => !kernelNames.has(name))
    .map(([name, value]) => `export ${shellQuote(`${name}=${value}`)}`);
  return [
    "set -e",
    `${BUSYBOX} rm -f ${CLAIM_FILE}`,
    `${BUSYBOX} wget -q -O ${BUNDLE_FILE} ${shellQuote(input.bundleUrl)}`,
    `${BUSYBOX} tar xzf ${BUNDLE_FILE} -C /app`,
    `${BUSYBOX} rm -f ${BUNDLE_FILE}`,
    `unset ${CLAIM_URL_ENV}`,
    ...exports,
    `exec ${runCommand(input.entryRelativePath, input.inspect, false).map(shellQuote).join(" ")}`,
    "",
  ].join("\n");
}

/**
 * The answer a pod gets whose claim a restarted supervisor cannot deliver (the bundle was in
 * the memory of the one that claimed it): the kernel never starts and the pod fails saying why.
 */
export const UNDELIVERABLE_CLAIM = "echo '[runner] this session was claimed by a runner that restarted before delivering its application'\nexit 1\n";

/** What a cold run pod is built from, less what the pool pod already has; `env` gives names only here (the values travel in the claim answer). */
export interface ClaimInputPod extends Pick<RunPodInput, "session" | "settings" | "env"> {
  /** The pool pod as the apiserver last answered it: its resourceVersion is the claim's precondition. */
  pod: V1Pod;
  /** Extra annotations, as the backend's wiring provides them. */
  annotations: Record<string, string>;
  ttlSeconds: number;
  now: number;
}

/**
 * The claim: the pod's replacement (an update, which the apiserver refuses with 409 when the
 * resourceVersion it carries is no longer the pod's: whatever changed it first, another claim
 * first of all, wins, so a pod can never be claimed twice). Only metadata and the deadline
 * change, the fields an update of a pod may change; the TTL counts from now, on a deadline that
 * counts from the pod's start.
 */
export function claimedPod(input: ClaimInputPod): V1Pod {
  const { pod } = input;
  const metadata = sessionPodMetadata({ name: pod.metadata?.name ?? "", settings: input.settings, labels: sessionLabels(input.settings, input.session.sessionId), session: input.session, env: input.env });
  const started = pod.status?.startTime ? new Date(pod.status.startTime).getTime() : Number.NaN;
  const elapsed = Number.isFinite(started) ? Math.max(0, Math.ceil((input.now - started) / 1000)) : 0;
  return {
    apiVersion: "v1",
    kind: "Pod",
    metadata: { ...pod.metadata, labels: metadata.labels, annotations: { ...pod.metadata?.annotations, ...metadata.annotations, ...input.annotations } },
    spec: { ...pod.spec!, activeDeadlineSeconds: elapsed + input.ttlSeconds },
  };
}
