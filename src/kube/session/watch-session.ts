/**
 * A watch session (docs/kubernetes.md "Watch pods") as the engine runs it: one pod holding a shared workspace,
 * the runner-owned `workspace` container serving it, one `app-<name>` container per app
 * running `telo run --watch`, and optionally the co-resident agent. Serving means Running with
 * an IP and the workspace answering. What watch adds to the engine: the workspace seed, port
 * changes declared by the kernels, and a new pod (under a new name) on an app-set change; a
 * suspend deletes the pod, a resume is a fresh start under the same session id.
 */
import type { V1Pod } from "@kubernetes/client-node";
import { setTimeout as sleep } from "node:timers/promises";
import type { ResolvedApp, WorkspaceChangeSet } from "../../contract/wire.ts";
import type { BackendCallbacks, Started, StartSpec, Workload } from "../../sessions/backend-seam.ts";
import { SessionStartError } from "../../sessions/backend-seam.ts";
import { type KubeContext, runnerLine } from "../context.ts";
import { clampLimits } from "../specs/limits.ts";
import { appContainerName, watchPodName, watchPodSuffix, workspaceConfigMapName } from "../specs/names.ts";
import { WATCH_INSPECT_BASE_PORT, watchPod } from "../specs/watch-pod.ts";
import { apiFailureMessage, apiReason } from "../status/api-error.ts";
import type { PodDecision } from "../status/pod-decision.ts";
import { appRunEnds } from "../status/run-ended.ts";
import { watchSessionEnd } from "../status/watch-pod-status.ts";
import type { TerminalStatus } from "../status/terminal-status.ts";
import { WORKSPACE_APP_MANIFEST } from "../workspace-app/manifest.ts";
import { followApp } from "./relays.ts";
import { sessionFacts } from "./session-facts.ts";
import { SessionPod, StartFailure } from "./session-pod.ts";
import { createSessionPod } from "./token-secret-calls.ts";
import { ContainerTerminal } from "./container-terminal.ts";
import { type AdoptedStreams, saveCeiling, saveHandover } from "./stream-marks-calls.ts";
import { ensureWorkspaceConfigMap } from "./ensure-workspace-configmap.ts";
import type { PodWorkspaceClient } from "./workspace-client.ts";
import { WatchPorts } from "./watch-ports.ts";
import { releaseWatchRuntime, type WatchRuntime, watchRuntime } from "./watch-runtime.ts";
import { restoreChangeSet, seedChangeSet, touchChangeSet, workspaceMarker } from "./workspace-seed.ts";

/** Bring-up: once Running, the workspace surface must answer, probed every half second. */
const WORKSPACE_READY_DEADLINE_MS = 120_000;
const WORKSPACE_POLL_MS = 500;

export type WatchSessionOptions = {
  /** RUNNER_WATCH_MAX_TTL_SECONDS: the pod's activeDeadlineSeconds. */
  ttlSeconds: number;
};

/** Makes every pod name of this process unique even within one millisecond. */
let podCounter = 0;

/** Fresh on every pod (re)creation: the previous pod may still be terminating under its name. */
function nextPodSuffix(): string {
  podCounter += 1;
  return watchPodSuffix(Date.now(), podCounter);
}

export class WatchSession {
  readonly #ctx: KubeContext;
  readonly #spec: StartSpec;
  readonly #callbacks: BackendCallbacks;
  readonly #ttlSeconds: number;
  #apps: ResolvedApp[];
  #runtime: WatchRuntime | undefined;
  #finished = false;
  /** App-set changes run one after the other. */
  #appChange: Promise<void> = Promise.resolve();
  /** An adopted pod's terminal starts; a pod created later starts at the beginning. */
  #adopted: { podName: string; streams: AdoptedStreams } | undefined;
  readonly #ports: WatchPorts;
  #resolveDone!: () => void;
  readonly done = new Promise<void>((resolve) => (this.#resolveDone = resolve));

  constructor(ctx: KubeContext, spec: StartSpec, callbacks: BackendCallbacks, options: WatchSessionOptions) {
    this.#ctx = ctx;
    this.#spec = spec;
    this.#callbacks = callbacks;
    this.#ttlSeconds = options.ttlSeconds;
    this.#apps = spec.apps.map((app) => ({ ...app, ports: [...app.ports] }));
    this.#ports = new WatchPorts(ctx, spec, callbacks, (runtime) => this.#runtime === runtime);
  }

  /** Start or resume: the ConfigMap, a new pod seeded with the bundle, then `running`. */
  async start(): Promise<Started> {
    try {
      await ensureWorkspaceConfigMap(this.#ctx);
      await this.#bringUp({ seed: seedChangeSet(this.#spec.bundle.files, workspaceMarker(this.#apps, this.#ctx.config.kernelImages)) });
    } catch (error) {
      this.#end();
      throw error;
    }
    return { workload: this.#workload(), running: this.#ports.runningStatus(this.#apps) };
  }

  /** Takes over a pod an earlier supervisor created (restart safety): its workspace is kept as it is. */
  async adopt(pod: V1Pod, streams?: AdoptedStreams): Promise<Started> {
    if (streams) this.#adopted = { podName: pod.metadata?.name ?? "", streams };
    try {
      await this.#bringUp({ existing: pod });
    } catch (error) {
      this.#end();
      throw error;
    }
    return { workload: this.#workload(), running: this.#ports.runningStatus(this.#apps) };
  }

  /**
   * Bring-up: create the pod (or take the existing one), wait for it to serve, then attach, write
   * `seed`, publish, relay and watch. Throws a SessionStartError; a pod created here is
   * deleted again on any failure after its create.
   */
  async #bringUp(input: { seed?: WorkspaceChangeSet; existing?: V1Pod }): Promise<void> {
    const suffix = input.existing ? undefined : nextPodSuffix();
    const podName = input.existing?.metadata?.name ?? watchPodName(this.#spec.sessionId, suffix!);
    // The attempt ends on a stop, or when the pod dies before it serves.
    const attempt = new AbortController();
    const stopped = AbortSignal.any([attempt.signal, this.#callbacks.stopRequested]);
    const pod = new SessionPod(this.#ctx, {
      podName,
      needsIp: true,
      finishedRan: false,
      adopted: input.existing !== undefined,
      stopRequested: stopped,
      onProgress: (message) => this.#callbacks.emit({ type: "progress", phase: "provision", message }),
      stages: { container: "workspace", onStage: (entry) => this.#callbacks.emit({ type: "stage", ...entry }) },
    });
    try {
      if (suffix === undefined) pod.check();
      else await createSessionPod(this.#ctx, pod, this.#podBody(suffix), this.#spec);
      const { pod: current } = await pod.started;
      const runtime = watchRuntime(pod, current);
      this.#runtime = runtime;
      pod.goLive((live, decision) => this.#onPodChange(runtime, live, decision, attempt));
      await this.#waitForWorkspace(runtime.workspace, stopped);
      if (stopped.aborted) throw this.#attemptEnded(attempt);
      await this.#goLive(runtime, input.seed, stopped);
      // A stop or the pod's end while going live: the runtime is torn down now.
      if (stopped.aborted) throw this.#attemptEnded(attempt);
      if (this.#finished) throw new StartFailure("the session pod ended while starting");
      runtime.serving = true;
      this.#onPodChange(runtime, this.#ctx.watcher.get(podName), undefined, attempt);
    } catch (error) {
      throw await this.#discardPod(pod, error);
    }
  }

  /** Why a bring-up attempt ended early: a stop, or the pod's end (the attempt's reason). */
  #attemptEnded(attempt: AbortController): StartFailure {
    return new StartFailure(this.#callbacks.stopRequested.aborted ? "the session was stopped" : String(attempt.signal.reason));
  }

  #podBody(nameSuffix: string): V1Pod {
    const { config } = this.#ctx;
    const spec = { ...this.#spec, apps: this.#apps };
    const pod = watchPod({
      session: sessionFacts(spec),
      env: this.#spec.env,
      settings: config.sessionPods,
      limits: clampLimits(config.appCeilings),
      ttlSeconds: this.#ttlSeconds,
      defaultImage: config.defaultImage,
      teloImages: config.kernelImages,
      nameSuffix,
      workspaceConfigMap: workspaceConfigMapName(WORKSPACE_APP_MANIFEST, config.sessionPods.ownerId),
      ...(this.#spec.agent && { agent: this.#spec.agent }),
      ...(this.#spec.token && { agentTokenEnv: this.#spec.token.env }),
    });
    pod.metadata!.annotations = { ...pod.metadata!.annotations, ...this.#ctx.extraPodAnnotations(spec) };
    return pod;
  }

  /** Bring-up: `GET /workspace` every poll interval until it answers or the deadline passes. */
  async #waitForWorkspace(workspace: PodWorkspaceClient, signal: AbortSignal): Promise<void> {
    this.#callbacks.emit({ type: "progress", phase: "boot", message: "Starting workspace" });
    const deadline = performance.now() + WORKSPACE_READY_DEADLINE_MS;
    let lastError = "no response";
    while (!signal.aborted) {
      try {
        await workspace.tree(signal);
        return;
      } catch (error) {
        lastError = error instanceof Error ? error.message : String(error);
      }
      if (performance.now() >= deadline) throw new SessionStartError("start", `workspace container did not become ready: ${lastError}`);
      await sleep(WORKSPACE_POLL_MS, undefined, { signal }).catch(() => undefined);
    }
  }

  /**
   * A failed bring-up: delete the pod it may have created (grace 0, 404 ok) and say why it
   * failed. A delete that fails too is part of the message, as for run sessions.
   */
  async #discardPod(pod: SessionPod, error: unknown): Promise<Error> {
    const failure =
      error instanceof SessionStartError ? error : new SessionStartError("start", error instanceof Error ? error.message : String(error), { cause: error });
    if (this.#runtime?.pod === pod) this.#releaseRuntime();
    pod.release();
    if (failure.stage === "create") return failure;
    try {
      await pod.delete();
    } catch (deleteError) {
      pod.collect(deleteError);
      return new SessionStartError("start", `${failure.message}; deleting the pod failed: ${apiReason(deleteError)}`, { cause: deleteError });
    }
    return failure;
  }

  /**
   * Going live: attach every app, seed, publish, relay, reach. Unlike the reference, the
   * apps are attached before the seed: their containers wait for their entries, so what a
   * kernel prints on its first load (a manifest error, say) reaches the terminal.
   */
  async #goLive(runtime: WatchRuntime, seed: WorkspaceChangeSet | undefined, signal: AbortSignal): Promise<void> {
    await Promise.all(this.#apps.map((app) => this.#openTerminal(runtime, app)));
    if (seed) await this.#write(runtime.workspace, seed, signal, "seeding the workspace");
    try {
      await this.#ports.publish(runtime, this.#apps);
    } catch (error) {
      throw new SessionStartError("start", apiFailureMessage("could not publish the session's endpoints", error), { cause: error });
    }
    this.#apps.forEach((app, index) => {
      const follower = followApp({
        podIp: runtime.podIp,
        inspectPort: WATCH_INSPECT_BASE_PORT + index,
        ports: app.ports,
        signal: runtime.abort.signal,
        onDebug: (frame) => {
          this.#ports.onFrame(runtime, this.#apps, app.name, frame);
          this.#callbacks.emit({ type: "debug", app: app.name, frame });
        },
        onReachability: (port, state) => this.#callbacks.emit({ type: "reachability", app: app.name, port, state }),
        say: (text) => this.#say(app.name, app.io === "tty", text),
        log: this.#ctx.log.child({ sessionId: this.#spec.sessionId, app: app.name }),
      });
      runtime.followers.set(app.name, follower);
    });
  }

  async #write(workspace: PodWorkspaceClient, changes: WorkspaceChangeSet, signal: AbortSignal, what: string): Promise<void> {
    try {
      await workspace.apply(changes, signal);
    } catch (error) {
      if (signal.aborted) throw signal.reason;
      throw new SessionStartError("start", `${what} failed: ${error instanceof Error ? error.message : String(error)}`, { cause: error });
    }
  }

  /** One terminal per app; `tty` apps get one merged stream, `streams` apps stdout and stderr. */
  async #openTerminal(runtime: WatchRuntime, app: ResolvedApp): Promise<void> {
    const tty = app.io === "tty";
    const terminal = new ContainerTerminal(this.#ctx, {
      podName: runtime.pod.name,
      container: appContainerName(app.name),
      tty,
      onOutput: (bytes, tag) => this.#callbacks.emit({ type: "output", app: app.name, bytes, tag }),
      say: (text) => this.#say(app.name, tty, text),
      ...(this.#adopted?.podName === runtime.pod.name && { start: this.#adopted.streams.startOf(app.name) }),
    });
    runtime.terminals.set(app.name, terminal);
    await terminal.open();
  }

  /** A runner line on an app's terminal (stderr for a `streams` app). */
  #say(app: string, tty: boolean, text: string): void {
    this.#callbacks.emit({ type: "output", app, bytes: runnerLine(text), tag: tty ? "tty" : "stderr" });
  }

  /** Every change of a pod past Running: during the bring-up its death ends the attempt; then status/watch-pod-status.ts decides. */
  #onPodChange(runtime: WatchRuntime, pod: V1Pod | undefined, decision: PodDecision | undefined, attempt: AbortController): void {
    if (this.#runtime !== runtime || this.#finished) return;
    if (!runtime.serving) {
      if (decision?.kind === "gone") attempt.abort("pod disappeared before reaching Running");
      else if (decision?.kind === "ended") attempt.abort(`pod reached ${decision.pod.status?.phase} before serving`);
      return;
    }
    const userStopped = this.#callbacks.isUserStopped();
    if (!pod) return void this.#finish(userStopped ? { kind: "stopped" } : { kind: "failed", message: "pod disappeared" });
    if (!userStopped) {
      for (const end of appRunEnds(pod)) {
        if (runtime.ended.has(end.app)) continue;
        runtime.ended.add(end.app);
        this.#callbacks.emit({ type: "runEnded", app: end.app, outcome: { reason: end.reason } });
      }
    }
    const end = watchSessionEnd(pod, userStopped);
    if (end) void this.#finish(end);
  }

  /** The session ended on its own (pod ended or vanished): clean up, then report. */
  async #finish(status: TerminalStatus): Promise<void> {
    if (this.#finished) return;
    this.#finished = true;
    const runtime = this.#releaseRuntime();
    await runtime?.pod.delete().catch((error: unknown) => {
      this.#ctx.log.warn("deleting an ended watch pod failed; retrying", { sessionId: this.#spec.sessionId, reason: apiReason(error) });
      runtime.pod.collect(error);
    });
    this.#callbacks.emit({ type: "status", status });
    this.#resolveDone();
  }

  /** Marks the session over without a status of its own (a failed start: the core reports it). */
  #end(): void {
    this.#finished = true;
    this.#resolveDone();
  }

  /** Stops following the pod and everything fed from it, without deleting it. */
  #releaseRuntime(): WatchRuntime | undefined {
    const runtime = this.#runtime;
    if (!runtime) return undefined;
    this.#runtime = undefined;
    releaseWatchRuntime(runtime);
    return runtime;
  }

  /** Let go to another replica: its terminals' positions saved with the last ids (stream-marks-calls.ts). */
  async #handOver(ids: Parameters<NonNullable<Workload["handOver"]>>[0]): Promise<void> {
    if (this.#finished) return;
    const saved = this.#runtime && saveHandover(this.#ctx, this.#runtime.pod.name, ids, [...this.#runtime.terminals]);
    this.#releaseRuntime();
    this.#end();
    await saved;
  }

  /** Teardown: the pod watch first, so the delete is not reported as the session failing. */
  async #teardown(): Promise<void> {
    const runtime = this.#releaseRuntime();
    if (runtime) await runtime.pod.delete();
  }

  /** A reload: the entry's own bytes written back, which the kernel's file watcher sees as a change. */
  async #reload(appName: string): Promise<void> {
    const runtime = this.#runtime;
    const app = this.#apps.find((candidate) => candidate.name === appName);
    if (!runtime || !app) return;
    const current = await runtime.workspace.fileBase64(app.entryRelativePath);
    await runtime.workspace.apply(touchChangeSet(app.entryRelativePath, current));
  }

  /**
   * An app-set change: a pod's containers are fixed at creation, so a new app set is a new pod: snapshot the
   * workspace, tear the pod down, bring up a new one with the snapshot written back instead of
   * the bundle (the workspace has moved on since the start). A failure ends the session and
   * reaches the caller, which logs and reports it: the old pod's delete refused, or the new
   * pod's start failed (bringUp has deleted that pod again, or says why it could not).
   */
  async #setApps(next: ResolvedApp[]): Promise<void> {
    const runtime = this.#runtime;
    if (!runtime || this.#finished) throw new Error("the session has no live pod");
    const snapshot = await runtime.workspace.snapshot();
    try {
      await this.#teardown();
      this.#apps = next.map((app) => ({ ...app, ports: [...app.ports] }));
      // Written back before the pod goes live, like a first seed: the app containers wait for
      // their entries, so no kernel loads a half-restored workspace.
      await this.#bringUp({ seed: restoreChangeSet(snapshot) });
    } catch (error) {
      this.#end();
      throw error;
    }
    this.#callbacks.emit({ type: "status", status: this.#ports.runningStatus(this.#apps) });
  }

  /** A stop or a suspend: the pod goes; a stop also reports `stopped`. */
  async #close(report: boolean): Promise<void> {
    if (this.#finished) return;
    this.#finished = true;
    try {
      await this.#teardown();
    } finally {
      if (report) this.#callbacks.emit({ type: "status", status: { kind: "stopped" } });
      this.#resolveDone();
    }
  }

  #workload(): Workload {
    const session = this;
    return {
      done: this.done,
      get workspace() {
        return session.#runtime?.workspace;
      },
      writeStdin: (app, bytes) => this.#runtime?.terminals.get(app)?.writeStdin(bytes),
      resize: (app, cols, rows) => this.#runtime?.terminals.get(app)?.resize(cols, rows),
      reload: (app) => this.#reload(app),
      setApps: (apps) => {
        // One change at a time: a second one would find the pod of the first torn down.
        const change = this.#appChange.then(() => this.#setApps(apps));
        this.#appChange = change.catch(() => undefined);
        return change;
      },
      suspend: () => this.#close(false),
      stop: () => this.#close(true),
      release: () => {
        if (this.#finished) return;
        this.#releaseRuntime();
        this.#end();
      },
      handOver: (ids) => this.#handOver(ids),
      saveCeiling: async (ceiling) => (this.#runtime && !this.#finished ? saveCeiling(this.#ctx, this.#runtime.pod.name, ceiling) : undefined),
    };
  }
}
