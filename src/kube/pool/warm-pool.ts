/**
 * The warm pool (docs/kubernetes.md "Warm pool"): keeps RUNNER_WARM_POOL_SIZE unclaimed pool pods ready, hands one
 * to a run session that it can serve, and refills in the background. Everything it knows about
 * its pods comes from the runner's one pod watch; what it decides is `plan.ts`'s.
 *
 * - A claim takes the oldest ready pod with one conditional update (claimedPod): the pod becomes
 *   the session's, and its claim answer waits for it on the bundle listener (PoolClaims). A
 *   conflict means something else changed the pod first: the next pod is tried.
 * - The pod acknowledges its claim by fetching the session's bundle: until then a poll gets the
 *   answer again (the last one was lost on its way), and past `claimFetchDeadlineMs` without it
 *   the session ends with that said (`onUnfetched`) and its pod goes with it.
 * - Creates, deletes and their retries run beside claims, never in front of them.
 * - After a supervisor restart, pool pods are adopted (their claim URL read back from their spec)
 *   and count as the pool; a pod claimed by the dead supervisor but never told its claim is
 *   told that it cannot be, so it fails instead of waiting for its TTL.
 * - Among replicas (docs/replicas.md "The warm pool beside several replicas"): refill and
 *   replacement run on the duties holder only (`start`, `pause`); any replica claims, and a
 *   claim of a pod another replica made hands its answer to that maker over the peer link
 *   (`receiveClaim` on the maker's side). A pod whose maker is no live member is not claimable
 *   and is replaced.
 */
import { randomBytes } from "node:crypto";
import type { V1Pod } from "@kubernetes/client-node";
import type { WarmPoolSettings } from "../../config/kube.ts";
import type { PoolPeers, StartSpec } from "../../sessions/backend-seam.ts";
import { withDeadline } from "../cluster/api.ts";
import type { KubeContext } from "../context.ts";
import type { PoolClaims } from "./pool-claims.ts";
import { awaitHandedAnswer, handClaimToMaker } from "./claim-delivery.ts";
import { CALL_DEADLINE_MS, deletePod, readPod } from "../cluster/pod-calls.ts";
import { termAnnotations } from "../cluster/fencing.ts";
import { clampLimits } from "../specs/limits.ts";
import { LABEL, poolPodName } from "../specs/names.ts";
import type { SessionFacts } from "../specs/pod-common.ts";
import { claimScript, claimedPod, poolClaimUrl, poolPod, UNDELIVERABLE_CLAIM } from "../specs/pool-pod.ts";
import { observeWarmPool, warmPoolStart } from "../../metrics/figures.ts";
import { apiReason, isConflict } from "../status/api-error.ts";
import { claimUnfetchedMessage } from "../status/pool-claim.ts";
import { coldReason, isPoolPod, makerStanding, planPool, poolPodView, type PoolPodView } from "./plan.ts";

const MIN_RETRY_MS = 1_000;
const MAX_RETRY_MS = 30_000;
/** Among replicas, how often the duties holder looks for pods whose maker has left. */
const MAKERS_LOOK_MS = 2_000;

export interface ClaimRequest {
  spec: StartSpec;
  facts: SessionFacts;
  /** Extra annotations of the session's pod, as the backend's wiring provides them. */
  annotations: Record<string, string>;
  /** Stages the session's bundle; its single-use URL. */
  stageBundle(): Promise<string>;
  /** The claimed pod did not fetch the bundle in time: the session ends with this message. */
  onUnfetched(message: string): void;
}

export class WarmPool {
  readonly #ctx: KubeContext;
  readonly #claims: PoolClaims;
  readonly #settings: WarmPoolSettings;
  readonly #now: () => number;
  /** Created and not yet seen by the watch. */
  readonly #creating = new Set<string>();
  /** Claimed (or being claimed) and still labelled a pool pod in the watch's copy. */
  readonly #claimed = new Set<string>();
  readonly #deleting = new Set<string>();
  readonly #subscriptions = new Map<string, () => void>();
  /** Claimed pods' bundle-fetch deadlines, by pod. */
  readonly #fetchDeadlines = new Map<string, NodeJS.Timeout>();
  #timer: NodeJS.Timeout | undefined;
  #retryAt = 0;
  #retryMs = MIN_RETRY_MS;
  #queued = false;
  #stopped = true;
  /**
   * Several replicas: pool pods carry their maker, and a claim of another's pod hands its answer
   * over (docs/replicas.md "The warm pool beside several replicas"). Undefined alone: a pool pod
   * is this process's, and its claim answer is delivered here.
   */
  readonly #peers: PoolPeers | undefined;

  constructor(ctx: KubeContext, claims: PoolClaims, peers: PoolPeers | undefined, now: () => number = Date.now) {
    this.#ctx = ctx;
    this.#claims = claims;
    this.#peers = peers;
    this.#settings = ctx.config.warmPool;
    this.#now = now;
    // Every replica reports the installation's pool as it sees it, whoever holds the duties.
    this.#observe();
  }

  /**
   * Boot (among replicas: each time the duties are gained): the pool pods an earlier supervisor
   * left are this pool's (those whose claim URL is not this listener's are replaced; among
   * replicas they are another maker's, and the plan decides), and pods it claimed are told if
   * their claim was lost. A pod whose token this process holds already is left as it is.
   */
  adopt(poolPods: readonly V1Pod[], claimedFromPool: readonly V1Pod[]): void {
    for (const pod of poolPods) {
      const name = pod.metadata?.name ?? "";
      const url = poolClaimUrl(pod);
      if (this.#claims.known(name) || (url !== undefined && this.#claims.adopt(name, url)) || this.#peers) this.#follow(name);
      else void this.#remove(name);
    }
    for (const pod of claimedFromPool) {
      const name = pod.metadata?.name ?? "";
      const url = poolClaimUrl(pod);
      // A pod that collected its claim never polls again; one that did not gets this answer.
      if (this.#claims.known(name) || url === undefined || !this.#claims.adopt(name, url)) continue;
      this.#claims.deliver(name, Buffer.from(UNDELIVERABLE_CLAIM));
      this.#forgetWhenGone(name);
    }
    if (poolPods.length > 0) this.#ctx.log.info("adopted warm pool pods", { count: poolPods.length });
  }

  /** Refill and replacement begin (one replica: at boot; among replicas: on gaining the duties). */
  start(): void {
    this.#stopped = false;
    this.#reconcile();
  }

  /** Refill and replacement stop (the duties lost); claims, and answers waiting for their pods, go on. */
  pause(): void {
    this.#stopped = true;
    clearTimeout(this.#timer);
    for (const unsubscribe of this.#subscriptions.values()) unsubscribe();
    this.#subscriptions.clear();
  }

  stop(): void {
    this.pause();
    for (const timer of this.#fetchDeadlines.values()) clearTimeout(timer);
    this.#fetchDeadlines.clear();
  }

  /**
   * The maker's side of a claim made by another replica: the answer goes to the pod's poll, and
   * to any later poll until the claim's fetch deadline (the claimer holds the bundle and sees
   * the fetch; here only the answer is kept). False when this replica holds no token for the pod.
   */
  receiveClaim(name: string, answer: string): boolean {
    if (!this.#claims.known(name)) {
      const pod = this.#ctx.watcher.get(name);
      const url = pod && poolClaimUrl(pod);
      if (url === undefined || !this.#claims.adopt(name, url)) return false;
    }
    this.#claimed.add(name);
    this.#unfollow(name);
    this.#claims.deliver(name, Buffer.from(answer), () => true);
    const timer = setTimeout(() => {
      this.#fetchDeadlines.delete(name);
      this.#claims.forget(name);
    }, this.#ctx.timings.claimFetchDeadlineMs);
    timer.unref();
    this.#fetchDeadlines.set(name, timer);
    this.#forgetWhenGone(name);
    this.#ctx.log.debug("a warm pool pod claimed by another replica got its answer", { pod: name });
    this.#queue();
    return true;
  }

  #observe(): void {
    observeWarmPool(() => {
      const plan = this.#plan();
      return { ready: plan.claimable.length, starting: plan.live - plan.claimable.length };
    });
  }

  /** The name of the pool pod that is now this session's, or undefined: the session starts cold (the debug log says why). */
  async claim(request: ClaimRequest): Promise<string | undefined> {
    const { spec } = request;
    const reason = coldReason(spec, { defaultImage: this.#ctx.config.defaultImage, teloImages: this.#ctx.config.kernelImages, building: this.#ctx.builder !== undefined });
    if (reason !== undefined) return this.#cold(spec, reason);
    if (this.#plan().claimable.length === 0) return this.#cold(spec, "the warm pool has no ready pod");
    const bundleUrl = await request.stageBundle();
    const app = spec.apps[0]!;
    const answer = claimScript({ bundleUrl, env: spec.env, entryRelativePath: app.entryRelativePath, inspect: spec.inspect });
    // Read again after the await: a concurrent claim may have taken pods meanwhile.
    for (const name of this.#plan().claimable) {
      if (!this.#ctx.watcher.get(name)) continue;
      const taken = await this.#take(name, request);
      if (taken === "next") continue;
      if (typeof taken !== "string") return this.#cold(spec, taken.cold);
      // Staged still: not fetched (and the session not ended, which drops it).
      const unfetched = () => this.#ctx.bundles.has(spec.sessionId);
      if (taken === this.#peers?.identity || !this.#peers) this.#claims.deliver(name, Buffer.from(answer), unfetched);
      else if (!(await handClaimToMaker(this.#ctx, this.#peers, { maker: taken, pod: name, answer, sessionId: spec.sessionId }))) return this.#cold(spec, "the pod's maker could not take the claim's answer");
      this.#awaitFetch(name, spec.sessionId, unfetched, request.onUnfetched);
      this.#unfollow(name);
      this.#forgetWhenGone(name);
      warmPoolStart("warm");
      this.#ctx.log.debug("session claimed a warm pool pod", { sessionId: spec.sessionId, pod: name });
      this.#queue();
      return name;
    }
    return this.#cold(spec, "every ready pool pod was claimed meanwhile");
  }

  /**
   * One claim attempt: the pod replaced as the session's, conditional on the version read.
   * Answers the pod's maker (this replica's identity, "" for one replica), "next" when the pod
   * went or changed first, or why the session starts cold.
   */
  async #take(name: string, request: ClaimRequest): Promise<string | "next" | { cold: string }> {
    const { spec } = request;
    this.#claimed.add(name);
    try {
      // The watch cache keeps a trimmed pod (pod-trim.ts), and an update replaces the whole
      // object, so the claim is built on the pod as the apiserver has it; the resourceVersion
      // it carries still makes a second claim of the same pod a 409. Read by a list of one
      // name: the manifests grant list on pods, not get.
      const pod = await readPod(this.#ctx, name, "the warm pool claim's read");
      if (!pod || !isPoolPod(pod)) {
        this.#claimed.delete(name);
        return "next";
      }
      // The claim stamps the claimer's term on the session's shard, as a create does.
      const writer = this.#ctx.ownership.writerFor(spec.sessionId);
      if (!writer) {
        this.#claimed.delete(name);
        return { cold: "this replica no longer holds the session's shard" };
      }
      const annotations = { ...request.annotations, ...termAnnotations(writer) };
      const limits = clampLimits(this.#ctx.config.runCeilings);
      const body = claimedPod({ pod, session: request.facts, settings: this.#ctx.config.sessionPods, env: spec.env, annotations, ttlSeconds: limits.ttlSeconds, now: this.#now() });
      await withDeadline(this.#ctx.api.core.replaceNamespacedPod({ name, namespace: this.#ctx.config.sessionPods.namespace, body }), CALL_DEADLINE_MS, "the warm pool claim");
      return pod.metadata?.labels?.[LABEL.poolMaker] ?? "";
    } catch (error) {
      this.#claimed.delete(name);
      if (isConflict(error)) return "next";
      this.#ctx.log.warn("claiming a warm pool pod failed", { sessionId: spec.sessionId, pod: name, reason: apiReason(error) });
      return { cold: "the claim failed" };
    }
  }

  #cold(spec: StartSpec, reason: string): undefined {
    warmPoolStart("cold");
    this.#ctx.log.debug("session starts cold", { sessionId: spec.sessionId, reason });
    return undefined;
  }

  #plan() {
    const pods = this.#ctx.watcher.pods().filter(isPoolPod);
    for (const pod of pods) this.#creating.delete(pod.metadata?.name ?? "");
    // A claimed pod leaves the plan's sight once the watch shows it relabelled.
    const stillPool = new Set(pods.map((pod) => pod.metadata?.name ?? ""));
    for (const name of this.#claimed) if (!stillPool.has(name)) this.#claimed.delete(name);
    const live = this.#peers?.live();
    const views = pods.map((pod) => this.#view(pod, live));
    return planPool(
      views.filter((view) => !this.#deleting.has(view.name)),
      { size: this.#settings.size, maxIdleMs: this.#settings.maxIdleSeconds * 1000, now: this.#now(), creating: this.#creating.size, claimed: this.#claimed },
    );
  }

  /**
   * One replica: polled is whether the pod's shell has polled this listener. Among replicas, a
   * pod of this replica's making as well (its token registered again from its spec after a
   * restart); another live maker's pod counts as waiting once it runs (its maker answers the
   * polls and takes the claim's answer); a gone maker's pod is orphaned.
   */
  #view(pod: V1Pod, live: ReadonlySet<string> | undefined): PoolPodView {
    const name = pod.metadata?.name ?? "";
    if (!this.#peers || !live) return poolPodView(pod, this.#claims.polled(name));
    const standing = makerStanding(pod, this.#peers.identity, live);
    if (standing === "peer") return poolPodView(pod, true);
    if (standing === "gone") return poolPodView(pod, false, true);
    if (!this.#claims.known(name)) {
      const url = poolClaimUrl(pod);
      if (url === undefined || !this.#claims.adopt(name, url)) return poolPodView(pod, false, true);
      awaitHandedAnswer(this.#ctx, this.#claims, name);
    }
    return poolPodView(pod, this.#claims.polled(name));
  }

  /** Reconciles once per event-loop turn however many changes arrive in it. */
  #queue(): void {
    if (this.#queued || this.#stopped) return;
    this.#queued = true;
    setImmediate(() => {
      this.#queued = false;
      this.#reconcile();
    });
  }

  #reconcile(): void {
    if (this.#stopped) return;
    const plan = this.#plan();
    // A pod that went by other hands than the pool's needs following no more.
    for (const name of this.#subscriptions.keys()) {
      if (this.#creating.has(name) || this.#ctx.watcher.get(name)) continue;
      this.#unfollow(name);
      this.#claims.forget(name);
    }
    for (const name of plan.remove) void this.#remove(name);
    const now = this.#now();
    if (plan.create > 0 && now >= this.#retryAt) for (let i = 0; i < plan.create; i++) void this.#create();
    // Wake at the next expiry, or at the retry after a failed create.
    // Among replicas, also at the next look for makers that have left.
    const makersLook = this.#peers ? now + MAKERS_LOOK_MS : Infinity;
    const wakeAt = Math.min(plan.nextExpiry ?? Infinity, plan.create > 0 && now < this.#retryAt ? this.#retryAt : Infinity, makersLook);
    clearTimeout(this.#timer);
    if (wakeAt !== Infinity) {
      this.#timer = setTimeout(() => this.#reconcile(), Math.max(0, wakeAt - now));
      this.#timer.unref();
    }
  }

  async #create(): Promise<void> {
    const name = poolPodName(randomBytes(6).toString("hex"));
    this.#creating.add(name);
    const body = poolPod({
      name,
      settings: this.#ctx.config.sessionPods,
      limits: clampLimits(this.#ctx.config.runCeilings),
      defaultImage: this.#ctx.config.defaultImage,
      claimUrl: this.#claims.register(name),
      maxIdleSeconds: this.#settings.maxIdleSeconds,
      maker: this.#peers?.identity,
    });
    this.#follow(name);
    try {
      await withDeadline(this.#ctx.api.core.createNamespacedPod({ namespace: this.#ctx.config.sessionPods.namespace, body }), CALL_DEADLINE_MS, "the pool pod create call");
      if (this.#peers) awaitHandedAnswer(this.#ctx, this.#claims, name);
      this.#retryMs = MIN_RETRY_MS;
    } catch (error) {
      this.#creating.delete(name);
      this.#unfollow(name);
      this.#claims.forget(name);
      // Quota full, apiserver trouble: the pool waits and tries again, doubling the wait.
      this.#ctx.log.warn("creating a warm pool pod failed; trying again later", { reason: apiReason(error), retryInMs: this.#retryMs });
      this.#retryAt = this.#now() + this.#retryMs;
      this.#retryMs = Math.min(this.#retryMs * 2, MAX_RETRY_MS);
      this.#queue();
    }
  }

  async #remove(name: string): Promise<void> {
    if (this.#deleting.has(name)) return;
    this.#deleting.add(name);
    this.#unfollow(name);
    this.#claims.forget(name);
    try {
      await deletePod(this.#ctx, name);
    } catch (error) {
      this.#ctx.log.warn("deleting a warm pool pod failed", { pod: name, reason: apiReason(error) });
    } finally {
      this.#deleting.delete(name);
      this.#queue();
    }
  }

  /** Every change of an unclaimed pod (it ran, it ended, it went) reconciles the pool. */
  #follow(name: string): void {
    if (this.#subscriptions.has(name)) return;
    this.#subscriptions.set(name, this.#ctx.watcher.subscribe(name, () => this.#queue()));
  }

  #unfollow(name: string): void {
    this.#subscriptions.get(name)?.();
    this.#subscriptions.delete(name);
  }

  /** The claim's acknowledgement is the bundle's fetch; without it by the deadline, the session ends. */
  #awaitFetch(name: string, sessionId: string, unfetched: () => boolean, onUnfetched: (message: string) => void): void {
    const deadlineMs = this.#ctx.timings.claimFetchDeadlineMs;
    const timer = setTimeout(() => {
      this.#fetchDeadlines.delete(name);
      // Fetched (the answer, env values and all, need be kept no longer) or not, it is done.
      this.#claims.forget(name);
      if (!unfetched()) return;
      this.#ctx.log.warn("a claimed warm pool pod did not fetch its bundle; ending its session", { sessionId, pod: name, deadlineMs });
      onUnfetched(claimUnfetchedMessage(deadlineMs));
    }, deadlineMs);
    timer.unref();
    this.#fetchDeadlines.set(name, timer);
  }

  /** A claim answer never collected, and its fetch deadline, go with its pod. */
  #forgetWhenGone(name: string): void {
    const unsubscribe = this.#ctx.watcher.subscribe(name, (pod) => {
      if (pod) return;
      unsubscribe();
      this.#claims.forget(name);
      clearTimeout(this.#fetchDeadlines.get(name));
      this.#fetchDeadlines.delete(name);
    });
  }
}
