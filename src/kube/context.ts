/** What every Kubernetes session needs from the backend around it. */
import type { KubeRunnerConfig } from "../config/kube.ts";
import type { Logger } from "../log.ts";
import type { StartSpec } from "../sessions/backend-seam.ts";
import type { SessionOwnership } from "../sessions/ownership-seam.ts";
import type { KubeApi } from "./cluster/api.ts";
import type { BundleStore } from "./bundle/bundle-store.ts";
import type { ImageBuilder } from "./build/image-build.ts";
import type { PodWatcher } from "./cluster/pod-watcher.ts";
import type { PoolClaims } from "./pool/pool-claims.ts";
import type { Router } from "./routing/router.ts";

export type KubeTimings = {
  /**
   * A session pod not serving by then fails its start (docs/kubernetes.md "Start"), run and
   * watch pods alike (RUNNER_START_DEADLINE_SECONDS).
   */
  startDeadlineMs: number;
  /** Re-attach delay after a terminal stream dropped while the pod still runs. */
  reattachDelayMs: number;
  /**
   * A claimed warm pool pod that has not fetched its session's bundle by then ends the session
   * and is deleted: its claim answer never reached it (a lost answer is served again, so this
   * is a pod that stopped polling or a network that keeps losing it). Past a claim poll's hold
   * (25 s), so that a pod whose poll was cut while held has polled again well before.
   */
  claimFetchDeadlineMs: number;
};

export const DEFAULT_KUBE_TIMINGS: KubeTimings = { startDeadlineMs: 120_000, reattachDelayMs: 1_000, claimFetchDeadlineMs: 60_000 };

export type KubeContext = {
  api: KubeApi;
  config: KubeRunnerConfig;
  watcher: PodWatcher;
  bundles: BundleStore;
  /** The warm pool's claim route on the bundle listener; undefined when the pool is off. */
  poolClaims?: PoolClaims | undefined;
  router: Router | undefined;
  builder: ImageBuilder | undefined;
  log: Logger;
  timings: KubeTimings;
  /**
   * Annotations added to a session's pods, chosen by whoever wires the backend (none against a
   * real cluster); the backend passes them on without reading them.
   */
  extraPodAnnotations: (spec: StartSpec) => Record<string, string>;
  /** Whether this process may write a session's pod now, and under which writer (cluster/pod-calls.ts fences every pod write by it). */
  ownership: Pick<SessionOwnership, "writerFor" | "lost">;
};

/** `"\r\n[runner] <text>\r\n"`: how the runner speaks on a session's terminal, on a line of its own. */
export function runnerLine(text: string): Buffer {
  return Buffer.from(`\r\n[runner] ${text}\r\n`);
}
