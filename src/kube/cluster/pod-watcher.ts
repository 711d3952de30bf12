/**
 * The one pod watch of the whole runner (docs/kubernetes.md "The pod watch"): a label-selected list and
 * watch over the session namespace, feeding a cache and per-pod subscribers. Sessions never
 * open watches of their own.
 *
 * Watches end routinely (server timeouts, rollouts) and can die silently (client-node 1.x has
 * no timeout of its own), so each is bounded by `timeoutSeconds`, kept honest by bookmarks and
 * an inactivity timer, and resumed from the last resourceVersion; a 410 — as an answer or as an
 * in-stream ERROR event — means relist. A relist reports pods that vanished meanwhile as gone.
 * The cache keeps each pod trimmed to the fields the supervisor reads (pod-trim.ts).
 */
import type { V1Pod } from "@kubernetes/client-node";
import type { Logger } from "../../log.ts";
import { podWatchRestarted } from "../../metrics/figures.ts";
import type { KubeApi } from "./api.ts";
import { trimPod } from "./pod-trim.ts";
import { httpStatusOf } from "../status/api-error.ts";

export type PodListener = (pod: V1Pod | undefined) => void;

export type PodWatcherOptions = {
  namespace: string;
  labelSelector: string;
  /**
   * The pods of this runner among those the selector lets through (another runner's, under the
   * default identity's wider selector: specs/names.ts ownedObjects); the others are never cached.
   */
  keep?: (pod: V1Pod) => boolean;
  /** Server-side bound of one watch; randomised a little so restarts do not align. */
  watchTimeoutSeconds?: number;
  /** Longest silence (no event, no bookmark) before the watch is presumed dead. */
  inactivityMs?: number;
  /** Retry delays after failures, doubling up to the maximum. */
  minBackoffMs?: number;
  maxBackoffMs?: number;
};

export class PodWatcher {
  readonly #pods = new Map<string, V1Pod>();
  readonly #listeners = new Map<string, Set<PodListener>>();
  #resourceVersion: string | undefined;
  #abort: AbortController | undefined;
  #inactivity: NodeJS.Timeout | undefined;
  #retry: NodeJS.Timeout | undefined;
  #backoffMs: number;
  #stopped = false;
  #watchSerial = 0;
  #resolveReady!: () => void;
  /** Settles after the first successful list. */
  readonly ready = new Promise<void>((resolve) => (this.#resolveReady = resolve));

  constructor(
    readonly api: KubeApi,
    readonly options: PodWatcherOptions,
    readonly log: Logger,
  ) {
    this.#backoffMs = options.minBackoffMs ?? 500;
  }

  start(): void {
    void this.#relist();
  }

  stop(): void {
    this.#stopped = true;
    this.#abort?.abort();
    clearTimeout(this.#inactivity);
    clearTimeout(this.#retry);
  }

  /** The cached pod, as last seen. */
  get(name: string): V1Pod | undefined {
    return this.#pods.get(name);
  }

  pods(): V1Pod[] {
    return [...this.#pods.values()];
  }

  /** Calls `listener` with each new version of the pod, and with undefined once it is gone. */
  subscribe(name: string, listener: PodListener): () => void {
    let set = this.#listeners.get(name);
    if (!set) this.#listeners.set(name, (set = new Set()));
    set.add(listener);
    return () => {
      set.delete(listener);
      if (set.size === 0) this.#listeners.delete(name);
    };
  }

  async #relist(): Promise<void> {
    if (this.#stopped) return;
    try {
      const list = await this.api.core.listNamespacedPod({
        namespace: this.options.namespace,
        labelSelector: this.options.labelSelector,
      });
      const seen = new Set<string>();
      for (const pod of list.items) {
        const name = pod.metadata?.name;
        if (!name) continue;
        seen.add(name);
        this.#apply(name, pod);
      }
      for (const name of [...this.#pods.keys()]) if (!seen.has(name)) this.#apply(name, undefined);
      this.#resourceVersion = list.metadata?.resourceVersion;
      this.#resolveReady();
      await this.#watch();
    } catch (error) {
      this.log.warn("listing session pods failed; retrying", { status: httpStatusOf(error) });
      this.#scheduleRetry(() => this.#relist());
    }
  }

  async #watch(): Promise<void> {
    if (this.#stopped) return;
    const serial = ++this.#watchSerial;
    const timeoutSeconds = Math.round((this.options.watchTimeoutSeconds ?? 300) * (0.8 + Math.random() * 0.2));
    /**
     * A clean end resumes at once and a 410 relists at once; a watch the apiserver refused
     * relists after the backoff, which only a watch that delivered an event resets, so a watch
     * refused at every try (403, 500) cannot spin list after list.
     */
    const ended = (how: "clean" | "expired" | "failed") => {
      // Only the current watch may schedule the next one.
      if (serial !== this.#watchSerial || this.#stopped) return;
      podWatchRestarted(how === "clean" ? "resume" : "relist");
      this.#watchSerial += 1;
      clearTimeout(this.#inactivity);
      this.#abort?.abort();
      if (how === "clean") this.#scheduleRetry(() => this.#watch(), 0);
      else if (how === "expired") this.#scheduleRetry(() => this.#relist(), 0);
      else this.#scheduleRetry(() => this.#relist());
    };
    this.#armInactivity(() => ended("clean"));
    try {
      this.#abort = await this.api.watch.watch(
        `/api/v1/namespaces/${this.options.namespace}/pods`,
        {
          labelSelector: this.options.labelSelector,
          resourceVersion: this.#resourceVersion,
          allowWatchBookmarks: true,
          timeoutSeconds,
        },
        (type: string, object: V1Pod & { code?: number }) => {
          if (serial !== this.#watchSerial) return;
          this.#armInactivity(() => ended("clean"));
          // An in-stream ERROR (410 Gone or any other) invalidates the version: relist.
          if (type === "ERROR") return ended("expired");
          this.#backoffMs = this.options.minBackoffMs ?? 500;
          const version = object.metadata?.resourceVersion;
          if (version) this.#resourceVersion = version;
          if (type === "BOOKMARK") return;
          const name = object.metadata?.name;
          if (name) this.#apply(name, type === "DELETED" ? undefined : object);
        },
        (error: unknown) => {
          if (!error) return ended("clean");
          if (httpStatusOf(error) === 410) return ended("expired");
          this.log.warn("session pod watch failed; relisting", { status: httpStatusOf(error), retryInMs: this.#backoffMs });
          ended("failed");
        },
      );
    } catch (error) {
      this.log.warn("session pod watch could not be opened; retrying", { status: httpStatusOf(error) });
      if (serial === this.#watchSerial) {
        podWatchRestarted("relist");
        this.#watchSerial += 1;
        clearTimeout(this.#inactivity);
        this.#scheduleRetry(() => this.#relist());
      }
    }
  }

  /** Cache and listeners see the same trimmed copy (pod-trim.ts says what it keeps). */
  #apply(name: string, received: V1Pod | undefined): void {
    const kept = received && (this.options.keep?.(received) ?? true) ? received : undefined;
    const pod = kept && trimPod(kept);
    if (pod) this.#pods.set(name, pod);
    else if (this.#pods.has(name)) this.#pods.delete(name);
    else return;
    for (const listener of [...(this.#listeners.get(name) ?? [])]) listener(pod);
  }

  #armInactivity(onSilence: () => void): void {
    clearTimeout(this.#inactivity);
    const limit = this.options.inactivityMs ?? ((this.options.watchTimeoutSeconds ?? 300) + 60) * 1000;
    this.#inactivity = setTimeout(onSilence, limit);
    this.#inactivity.unref();
  }

  #scheduleRetry(next: () => Promise<void>, delayMs = this.#backoffMs): void {
    if (this.#stopped) return;
    clearTimeout(this.#retry);
    if (delayMs > 0) this.#backoffMs = Math.min(this.#backoffMs * 2, this.options.maxBackoffMs ?? 10_000);
    this.#retry = setTimeout(() => void next(), delayMs);
    this.#retry.unref();
  }
}
