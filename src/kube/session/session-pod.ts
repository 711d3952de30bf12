/**
 * One session pod's life (docs/kubernetes.md "The engine"): followed through the shared pod watch from
 * before its create, created with a deadline, driven to Running by the decisions of
 * `status/pod-decision.ts` (the start deadline included), then reported to its session on every
 * change, and deleted exactly once however many ways a stop arrives.
 */
import { setTimeout as sleep } from "node:timers/promises";
import type { V1Pod } from "@kubernetes/client-node";
import type { KubeContext } from "../context.ts";
import { SessionMoved } from "../../sessions/backend-seam.ts";
import { apiReason } from "../status/api-error.ts";
import { collectRetryPause } from "../retry/collect-retry.ts";
import { decidePod, type PodDecision, type SessionPhase } from "../status/pod-decision.ts";
import { provisionMessage } from "../status/provision.ts";
import { podStages } from "../status/pod-stages.ts";
import type { TimelineEntry } from "../../contract/wire.ts";
import { pullTrouble } from "../status/waiting.ts";
import { createPod, deletePod } from "../cluster/pod-calls.ts";

export type SessionPodOptions = {
  podName: string;
  /** See SessionPhase: what serving means for this session's mode. */
  needsIp: boolean;
  finishedRan: boolean;
  /** The pod exists already (a re-adoption): its absence from the watch means it was deleted. */
  adopted: boolean;
  /** A stop ends the start at once rather than at its deadline. */
  stopRequested: AbortSignal;
  onProgress(message: string): void;
  /** The kernel's container, whose start's stages go to `onStage` once each (none: not reported). */
  stages?: { container: string; onStage(entry: TimelineEntry): void };
};

/** How a start ended: the pod serves, or (run sessions) it ran and ended between two events. */
export type StartOutcome = { kind: "ready"; pod: V1Pod } | { kind: "ran"; pod: V1Pod };

/** A start that did not reach Running; the session deletes the pod and reports `message`. */
export class StartFailure extends Error {}

export type LiveListener = (pod: V1Pod | undefined, decision: PodDecision) => void;

export class SessionPod {
  readonly name: string;
  readonly #ctx: KubeContext;
  readonly #options: SessionPodOptions;
  readonly deadlineAt: number;
  #phase: SessionPhase;
  #live: LiveListener | undefined;
  #unsubscribe: () => void;
  #timer: NodeJS.Timeout | undefined;
  #lastProgress: { provision?: string | undefined; pull?: string | undefined } = {};
  readonly #stagesReported = new Set<string>();
  #deletion: Promise<void> | undefined;
  /** The watch has shown this pod: its absence from the watch is then its deletion, not lag. */
  #seen = false;
  #settle!: { resolve(outcome: StartOutcome): void; reject(error: Error): void };
  /** Settles once: ready/ran, or a StartFailure (deadline, early end, disappearance, stop). */
  readonly started: Promise<StartOutcome>;

  constructor(ctx: KubeContext, options: SessionPodOptions) {
    this.#ctx = ctx;
    this.#options = options;
    this.name = options.podName;
    this.deadlineAt = Date.now() + ctx.timings.startDeadlineMs;
    this.#phase = { kind: "starting", deadlineAt: this.deadlineAt, needsIp: options.needsIp, finishedRan: options.finishedRan, seen: options.adopted };
    this.started = new Promise((resolve, reject) => (this.#settle = { resolve, reject }));
    // Handled by whoever awaits it; a failure before anyone does must not go unhandled.
    this.started.catch(() => undefined);
    // Subscribed before the create, so no event about the new pod can be missed.
    this.#unsubscribe = ctx.watcher.subscribe(this.name, (pod) => this.#onPod(pod));
    // The timer is the deadline: it decides as of the deadline, never earlier. Node's timers
    // run on the monotonic clock in whole milliseconds and may fire a millisecond before
    // Date.now() reaches `deadlineAt`; deciding with Date.now() then answered "wait", and with
    // no further pod event (a container creating for an hour) the start waited for ever.
    this.#timer = setTimeout(() => this.#onPod(ctx.watcher.get(this.name), false, Math.max(Date.now(), this.deadlineAt)), Math.max(0, this.deadlineAt - Date.now()));
    this.#timer.unref();
    const stop = options.stopRequested;
    if (stop.aborted) this.#fail("the session was stopped");
    else stop.addEventListener("abort", () => this.#fail("the session was stopped"), { once: true });
  }

  /**
   * Creates the pod (retried within the start deadline), then reads what the watch already has.
   * Resolves with the apiserver's answer (see createPod).
   */
  async create(body: V1Pod): Promise<V1Pod | undefined> {
    let created;
    try {
      created = await createPod(this.#ctx, body, this.deadlineAt, this.#options.stopRequested);
    } catch (error) {
      this.release();
      // An attempt whose answer never came may have created the pod after all (an apiserver that
      // answered past the call's deadline): nothing would delete it, so it is deleted now; where
      // there is none, the delete answers 404 and that is all it costs.
      this.delete().catch((failure: unknown) => this.collect(failure));
      throw error;
    }
    this.check();
    return created;
  }

  /**
   * Reads the watch's current copy (after a create or on adoption). No copy is a wait after a
   * create (the watch may lag it) and a disappearance on adoption.
   */
  check(): void {
    this.#onPod(this.#ctx.watcher.get(this.name));
  }

  /** From now on every change of the pod goes to `listener` (called once at once with the current copy). */
  goLive(listener: LiveListener): void {
    this.#phase = { kind: "live" };
    this.#live = listener;
    clearTimeout(this.#timer);
    const current = this.#ctx.watcher.get(this.name);
    listener(current, decidePod(current, this.#phase, Date.now()));
  }

  /**
   * One delete per pod, whoever asks and however often; a failed one may be asked again. None
   * at all for a pod the watch saw go (deleted behind the runner's back, or by an earlier call):
   * the delete could only answer 404.
   */
  delete(): Promise<void> {
    if (this.#seen && this.#deletion === undefined && !this.#ctx.watcher.get(this.name)) return Promise.resolve();
    this.#deletion ??= deletePod(this.#ctx, this.name).catch((error: unknown) => {
      this.#deletion = undefined;
      throw error;
    });
    return this.#deletion;
  }

  /**
   * The pod's delete just failed with `failure` and nobody else will ask again (the session has
   * ended): retry it in the background while the failure is passing trouble, then say so.
   */
  collect(failure: unknown): void {
    // Refused by the fence: the pod is another replica's to delete.
    if (failure instanceof SessionMoved) return;
    const retry = async () => {
      let error = failure;
      for (let attempt = 1; ; attempt += 1) {
        const pause = collectRetryPause(error, attempt);
        if (pause === undefined) {
          this.#ctx.log.warn("gave up deleting a session pod; it stays until the next supervisor's boot", { pod: this.name, reason: apiReason(error) });
          return;
        }
        await sleep(pause);
        try {
          return await this.delete();
        } catch (next) {
          if (next instanceof SessionMoved) return;
          error = next;
        }
      }
    };
    void retry();
  }

  /** Stops following the pod (it is not deleted). */
  release(): void {
    clearTimeout(this.#timer);
    this.#unsubscribe();
    this.#live = undefined;
    this.#fail("the session ended");
  }

  #onPod(pod: V1Pod | undefined, fromWatch = true, now = Date.now()): void {
    if (fromWatch && pod) this.#seen = true;
    if (pod) this.#reportStages(pod, now);
    const phase = this.#phase;
    if (phase.kind === "live") {
      this.#live?.(pod, decidePod(pod, phase, now));
      return;
    }
    if (fromWatch && pod) phase.seen = true;
    const decision = decidePod(pod, phase, now);
    if (decision.kind === "ready" || decision.kind === "ran") this.#succeed(decision);
    else if (decision.kind === "start-failed") this.#fail(decision.message);
    else if (pod) this.#reportProgress(pod);
  }

  #reportStages(pod: V1Pod, now: number): void {
    const stages = this.#options.stages;
    if (!stages) return;
    for (const entry of podStages(pod, stages.container, now)) {
      if (this.#stagesReported.has(entry.stage)) continue;
      this.#stagesReported.add(entry.stage);
      stages.onStage(entry);
    }
  }

  #reportProgress(pod: V1Pod): void {
    const provision = provisionMessage(pod);
    const pull = pullTrouble(pod);
    if (provision !== undefined && provision !== this.#lastProgress.provision) this.#options.onProgress(provision);
    if (pull !== undefined && pull !== this.#lastProgress.pull) this.#options.onProgress(pull);
    this.#lastProgress = { provision: provision ?? this.#lastProgress.provision, pull };
  }

  #succeed(outcome: StartOutcome): void {
    clearTimeout(this.#timer);
    this.#phase = { kind: "live" };
    this.#settle.resolve(outcome);
  }

  #fail(message: string): void {
    clearTimeout(this.#timer);
    this.#settle.reject(new StartFailure(message));
  }
}
