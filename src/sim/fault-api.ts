// The fault knobs tests and scripts turn: request failures and latency (by verb/resource), and
// cluster-side events the runner must survive — watches dropped, resourceVersions compacted,
// attach streams cut, a pod exiting or vanishing behind its back, an answer lost on its way to a pod.
import type { AttachServer } from "./attach.ts";
import type { LostDownloadRule, PodNetwork } from "./download.ts";
import * as v from "valibot";
import { LagWatchesRuleSchema, RequestFaults, type FailRule, type LagWatchesRule, type LatencyRule, type LostAnswerRule } from "./faults.ts";
import type { Kubelet } from "./kubelet.ts";
import { lookupType, RESOURCE_TYPES } from "./resources.ts";
import type { Store } from "./store.ts";

const POD = lookupType("", "v1", "pods")!;

export class Faults {
  constructor(
    readonly requests: RequestFaults,
    private readonly store: Store,
    private readonly kubelet: Kubelet,
    private readonly attach: AttachServer,
    private readonly network: PodNetwork,
  ) {}

  /** The next `count` (default 1) requests matching verb/resource/subresource/namespace answer `code`. */
  failNext(rule: FailRule): void {
    this.requests.failNext(rule);
  }

  /** The next `count` (default 1) matching requests are served and their answers lost (the connection cut). */
  loseAnswers(rule: LostAnswerRule): void {
    this.requests.loseAnswers(rule);
  }

  /** Every matching request waits `ms` before it is served. */
  addLatency(rule: LatencyRule): void {
    this.requests.addLatency(rule);
  }

  /** Removes every failure, latency, lost-download and watch-lag rule. */
  clear(): void {
    this.requests.clear();
    this.network.clear();
    this.lagWatches({ ms: 0 });
  }

  /**
   * Watches (of one resource, e.g. "pods", or all) get each change `ms` after it happened, in
   * order, as from an apiserver whose watch cache is behind; reads and lists stay current. A
   * client acting on its informer's copy then acts on what was true `ms` ago.
   */
  lagWatches(rule: LagWatchesRule): void {
    const { resource, ms } = v.parse(LagWatchesRuleSchema, rule);
    for (const type of RESOURCE_TYPES) if (resource === undefined || type.plural === resource) this.store.collection(type).hub.lag(ms);
  }

  /**
   * The next `count` (default 1) 2xx answers to a wget of matching pods (namespace, pod, a part
   * of the URL) are lost on the way back: the server answered, the pod's wget fails.
   */
  loseDownloads(rule: LostDownloadRule): void {
    this.network.loseNext(rule);
  }

  /** Ends every open watch (of one resource, e.g. "pods", or all) as a dropped connection would. */
  dropWatches(resource?: string): number {
    let n = 0;
    for (const type of RESOURCE_TYPES) {
      if (resource !== undefined && type.plural !== resource) continue;
      const hub = this.store.collection(type).hub;
      n += hub.openWatches;
      hub.closeAll();
    }
    return n;
  }

  /** Compacts at the current version: a watch from any older resourceVersion gets 410 Expired. */
  expireResourceVersions(): void {
    this.store.expireAll();
  }

  /** Cuts attach WebSockets (of one pod, or all) without a closing Status. */
  cutAttachStreams(target: { namespace?: string | undefined; pod?: string | undefined } = {}): number {
    return this.attach.cut(target.namespace, target.pod);
  }

  /** The pod's containers (or one) exit now with `exitCode` (default 0). */
  exitPod(namespace: string, name: string, options: { exitCode?: number | undefined; container?: string | undefined } = {}): boolean {
    return this.kubelet.exitNow(namespace, name, options.exitCode ?? 0, options.container);
  }

  /** Removes the pod at once, skipping graceful deletion and finalizers, as if someone else deleted it. */
  deletePod(namespace: string, name: string): boolean {
    return this.store.remove(POD, namespace, name) !== undefined;
  }
}
