/**
 * A run or predefined-app session (docs/kubernetes.md "Run pods") as the engine runs it: one pod with one
 * `session` container, Running is serving, a pod that ran and ended between two events still
 * ran; then terminal, routes, debug relay and reachability; its end is the session's end.
 */
import type { V1Pod } from "@kubernetes/client-node";
import type { DebugFrame, TimelineEntry } from "../../contract/wire.ts";
import type { BackendCallbacks, RunningStatus, Started, StartSpec, Workload } from "../../sessions/backend-seam.ts";
import { SessionStartError } from "../../sessions/backend-seam.ts";
import { BundleArchiveError, bundleArchive } from "../bundle/bundle-archive.ts";
import { type KubeContext, runnerLine } from "../context.ts";
import { appPod } from "../specs/app-pod.ts";
import { clampLimits } from "../specs/limits.ts";
import { RUN_INSPECT_PORT, runPod } from "../specs/run-pod.ts";
import { POOL_POD_PREFIX } from "../specs/names.ts";
import { kernelImage, namesTeloVersion } from "../specs/kernel-image.ts";
import { apiReason } from "../status/api-error.ts";
import { sessionEndpoints } from "../status/endpoints.ts";
import { decidePod, type PodDecision } from "../status/pod-decision.ts";
import { terminalStatus, type TerminalStatus } from "../status/terminal-status.ts";
import { runSessionOutcome } from "../status/run-ended.ts";
import type { WarmPool } from "../pool/warm-pool.ts";
import { publishRoutes } from "./publish.ts";
import { followApp } from "./relays.ts";
import { SessionPod, StartFailure } from "./session-pod.ts";
import { createSessionPod } from "./token-secret-calls.ts";
import { ContainerTerminal, type TerminalStart } from "./container-terminal.ts";
import { type AdoptedStreams, saveCeiling, saveHandover } from "./stream-marks-calls.ts";
import { sessionFacts } from "./session-facts.ts";

const SESSION_CONTAINER = "session";

export class RunSession {
  readonly #ctx: KubeContext;
  readonly #spec: StartSpec;
  readonly #callbacks: BackendCallbacks;
  readonly #app: StartSpec["apps"][number];
  readonly #abort = new AbortController();
  #pod: SessionPod | undefined;
  #terminal: ContainerTerminal | undefined;
  #finished = false;
  #resolveDone!: () => void;
  readonly done = new Promise<void>((resolve) => (this.#resolveDone = resolve));

  readonly #pool: WarmPool | undefined;

  constructor(ctx: KubeContext, spec: StartSpec, callbacks: BackendCallbacks, pool?: WarmPool) {
    const app = spec.apps[0];
    if (!app) throw new Error("a run session has exactly one app");
    this.#ctx = ctx;
    this.#spec = spec;
    this.#callbacks = callbacks;
    this.#app = app;
    this.#pool = pool;
  }

  /** Creates the pod, or claims a warm one, and settles once it runs (or the start fails). */
  async start(): Promise<Started> {
    const claimed = await this.#claimWarm();
    if (claimed !== undefined) {
      // The pool pod was scheduled and started before this session existed: its claim is the start.
      this.#stage({ stage: "warm-claimed", at: new Date().toISOString(), detail: claimed });
      const pod = this.#follow(claimed, false, undefined, false);
      pod.check();
      return this.#whenStarted(pod);
    }
    const body = await this.#buildPod();
    const pod = this.#follow(body.metadata!.name!);
    try {
      await createSessionPod(this.#ctx, pod, body, this.#spec);
    } catch (error) {
      // The staged bundle goes with the start that never got a pod.
      this.#release();
      throw error;
    }
    return this.#whenStarted(pod);
  }

  /**
   * Takes over a pod an earlier supervisor created (restart safety); a Pending one gets a fresh
   * start deadline. A start that then fails is the session's end, as for a new session: it must
   * not leave the session `starting` with a workload whose stop does nothing.
   */
  async adopt(existing: V1Pod, streams?: AdoptedStreams): Promise<Started> {
    const name = existing.metadata!.name!;
    // A claimed pool pod's status dates a start from before the session existed: not its stages.
    const pod = this.#follow(name, true, streams?.startOf(this.#app.name), !name.startsWith(POOL_POD_PREFIX));
    // A pod that ended while no supervisor watched it (or whose delete failed just before the
    // kill) ran: the session ends as the pod ended, not as a failed start.
    const current = decidePod(this.#ctx.watcher.get(pod.name), { kind: "live" }, Date.now());
    if (current.kind === "ended") {
      void this.#finish(terminalStatus(current.pod, this.#callbacks.isUserStopped()), current.pod);
      return { workload: this.#workload(), running: undefined };
    }
    pod.check();
    return this.#whenStarted(pod);
  }

  /** A warm pool pod made this session's (its claim waits for it on the bundle listener), or undefined. */
  async #claimWarm(): Promise<string | undefined> {
    if (!this.#pool) return undefined;
    try {
      return await this.#pool.claim({
        spec: this.#spec,
        facts: sessionFacts(this.#spec),
        annotations: this.#ctx.extraPodAnnotations(this.#spec),
        stageBundle: () => this.#stageBundle(),
        onUnfetched: (message) => void this.#finish({ kind: "failed", message }),
      });
    } catch (error) {
      this.#release();
      throw error;
    }
  }

  #follow(podName: string, adopted = false, start?: TerminalStart, cold = true): SessionPod {
    this.#pod = new SessionPod(this.#ctx, {
      podName,
      needsIp: false,
      finishedRan: true,
      adopted,
      stopRequested: this.#callbacks.stopRequested,
      onProgress: (message) => this.#callbacks.emit({ type: "progress", app: this.#app.name, phase: "provision", message }),
      ...(cold && { stages: { container: SESSION_CONTAINER, onStage: (entry) => this.#stage(entry) } }),
    });
    this.#terminal = new ContainerTerminal(this.#ctx, {
      podName,
      container: SESSION_CONTAINER,
      tty: true,
      onOutput: (bytes) => this.#onOutput(bytes),
      say: (text) => this.#say(text),
      ...(start && { start }),
    });
    return this.#pod;
  }

  /** The pod ran (or runs): the workload with its `running`, the rest of the start (terminal, routes, relays) in the background. */
  async #whenStarted(pod: SessionPod): Promise<Started> {
    let outcome;
    try {
      outcome = await pod.started;
    } catch (error) {
      throw error instanceof StartFailure ? await this.#failStart(pod, error.message) : error;
    }
    const started = { workload: this.#workload(), running: this.#runningStatus() };
    if (outcome.kind === "ran") void this.#finish(terminalStatus(outcome.pod, this.#callbacks.isUserStopped()), outcome.pod);
    else {
      pod.goLive((_current, decision) => this.#onLivePod(decision));
      void this.#whenRunning(outcome.pod);
    }
    return started;
  }

  async #buildPod(): Promise<V1Pod> {
    const { config } = this.#ctx;
    const common = {
      session: sessionFacts(this.#spec),
      env: this.#spec.env,
      settings: config.sessionPods,
      defaultImage: config.defaultImage,
      teloImages: config.kernelImages,
    };
    const tokenEnv = this.#spec.token?.env;
    const pod = this.#spec.selfContained
      ? appPod({ ...common, limits: clampLimits(config.appCeilings), ...(tokenEnv !== undefined && { tokenEnv }) })
      : runPod({
          ...common,
          limits: clampLimits(config.runCeilings),
          ...(await this.#builtImage()),
          bundleUrl: await this.#stageBundle(),
        });
    const extra = this.#ctx.extraPodAnnotations(this.#spec);
    pod.metadata!.annotations = { ...pod.metadata!.annotations, ...extra };
    return pod;
  }

  /** The build path (docs/kubernetes.md "Image builds") when the runner builds images; nothing otherwise. */
  async #builtImage(): Promise<{ builtImage?: string }> {
    const builder = this.#ctx.builder;
    if (!builder) return {};
    const { config } = this.#spec;
    // A named version's image is the base, pulled as the runner pulls version images.
    const base = kernelImage(this.#spec, this.#app, { defaultImage: this.#ctx.config.defaultImage, telo: this.#ctx.config.kernelImages });
    const builtImage = await builder.ensureImage(
      {
        sessionId: this.#spec.sessionId,
        app: this.#app.name,
        bundle: this.#spec.bundle,
        baseImage: base.image,
        pullPolicy: (namesTeloVersion(this.#spec) ? this.#ctx.config.kernelImages.teloPullPolicy : config.pullPolicy) ?? "missing",
        entryRelativePath: this.#app.entryRelativePath,
        ...(typeof this.#spec.config.registryUrl === "string" && { registryUrl: this.#spec.config.registryUrl }),
      },
      (message, done) =>
        this.#callbacks.emit({ type: "progress", app: this.#app.name, phase: "build", message, ...(done !== undefined && { done }) }),
    );
    return { builtImage };
  }

  async #stageBundle(): Promise<string> {
    try {
      return this.#ctx.bundles.stage(this.#spec.sessionId, await bundleArchive(this.#spec.bundle.files));
    } catch (error) {
      if (error instanceof BundleArchiveError) throw new SessionStartError("create", error.message, { cause: error });
      throw error;
    }
  }

  #runningStatus(): RunningStatus {
    return {
      kind: "running",
      endpoints: sessionEndpoints(this.#app.ports, {
        sessionId: this.#spec.sessionId,
        baseDomain: this.#ctx.config.routing.baseDomain,
        routed: this.#ctx.router !== undefined,
      }),
    };
  }

  /** docs/kubernetes.md "The engine", in order: running, attach, routing, debug relay, reachability. */
  async #whenRunning(pod: V1Pod): Promise<void> {
    await this.#terminal!.open();
    if (this.#finished) return;
    if (this.#app.ports.length > 0) await this.#publish(pod);
    if (this.#finished) return;
    followApp({
      podIp: pod.status?.podIP,
      inspectPort: this.#spec.inspect ? RUN_INSPECT_PORT : undefined,
      ports: this.#app.ports,
      signal: this.#abort.signal,
      onDebug: (frame) => this.#onDebug(frame),
      onReachability: (port, state) => this.#callbacks.emit({ type: "reachability", app: this.#app.name, port, state }),
      say: (text) => this.#say(text),
      log: this.#ctx.log.child({ sessionId: this.#spec.sessionId }),
    });
  }

  async #publish(pod: V1Pod): Promise<void> {
    try {
      await publishRoutes(this.#ctx, {
        sessionId: this.#spec.sessionId,
        ports: this.#app.ports,
        owner: { name: this.#pod!.name, uid: pod.metadata?.uid ?? "" },
        replace: false,
        signal: this.#abort.signal,
        onReadError: (line) => this.#say(line),
        appOf: () => this.#app.name,
        onRoute: (event) => this.#callbacks.emit(event),
      });
    } catch (error) {
      this.#say(`could not publish the session route: ${apiReason(error)}`);
    }
  }

  #onLivePod(decision: PodDecision): void {
    const userStopped = this.#callbacks.isUserStopped();
    if (decision.kind === "gone") void this.#finish(userStopped ? { kind: "stopped" } : { kind: "failed", message: "pod disappeared" });
    else if (decision.kind === "ended") void this.#finish(terminalStatus(decision.pod, userStopped), decision.pod);
  }

  /**
   * Output goes to the terminal only. With inspect the kernel prints that it holds the app open
   * before the app has even started: a run's end is known from `Kernel.Stopped` on the debug
   * stream, or the pod's end, never from that line.
   */
  #onOutput(bytes: Uint8Array): void {
    this.#callbacks.emit({ type: "output", app: this.#app.name, bytes, tag: "tty" });
  }

  #onDebug(frame: DebugFrame): void {
    this.#callbacks.emit({ type: "debug", app: this.#app.name, frame });
  }

  #stage(entry: TimelineEntry): void {
    this.#callbacks.emit({ type: "stage", ...entry });
  }

  #say(text: string): void {
    this.#callbacks.emit({ type: "output", app: this.#app.name, bytes: runnerLine(text), tag: "tty" });
  }

  /**
   * A failed start: clean up; the core reports the failure on the stream as `start: <message>`
   * (the message does not say "start" again).
   */
  async #failStart(pod: SessionPod, message: string): Promise<SessionStartError> {
    this.#finished = true;
    this.#release();
    let failure = new SessionStartError("start", message);
    try {
      await pod.delete();
    } catch (error) {
      failure = new SessionStartError("start", `${message}; deleting the pod failed: ${apiReason(error)}`, { cause: error });
      pod.collect(error);
    }
    this.#resolveDone();
    return failure;
  }

  /**
   * The session ends with `status`; its run ends with it, before the status that ends the
   * stream (the kernel says nothing of a run's end: see runSessionOutcome).
   */
  async #finish(status: TerminalStatus, last?: V1Pod): Promise<void> {
    if (this.#finished) return;
    this.#finished = true;
    this.#release();
    if (status.kind !== "stopped") await this.#terminal?.backfill();
    this.#callbacks.emit({ type: "runEnded", app: this.#app.name, outcome: runSessionOutcome(status, last, SESSION_CONTAINER) });
    this.#callbacks.emit({ type: "status", status });
    this.#resolveDone();
    // The history lives in the supervisor now: an ended pod would only hold quota. Its
    // Service and routes go with it (owner references).
    const pod = this.#pod;
    await pod?.delete().catch((error: unknown) => {
      this.#ctx.log.warn("deleting an ended session pod failed; retrying", { sessionId: this.#spec.sessionId, reason: apiReason(error) });
      pod.collect(error);
    });
  }

  #release(): void {
    this.#abort.abort();
    this.#pod?.release();
    this.#terminal?.close();
    this.#ctx.bundles.drop(this.#spec.sessionId);
  }

  #workload(): Workload {
    return {
      done: this.done,
      writeStdin: (_app, bytes) => this.#terminal?.writeStdin(bytes),
      resize: (_app, cols, rows) => this.#terminal?.resize(cols, rows),
      stop: async () => {
        if (this.#finished) return;
        await this.#pod?.delete();
        await this.#finish({ kind: "stopped" });
      },
      release: () => {
        if (this.#finished) return;
        this.#finished = true;
        this.#release();
        this.#resolveDone();
      },
      handOver: async (ids) => {
        if (this.#finished) return;
        this.#finished = true;
        const terminal = this.#terminal;
        const saved = this.#pod && terminal && saveHandover(this.#ctx, this.#pod.name, ids, [[this.#app.name, terminal]]);
        this.#release();
        this.#resolveDone();
        await saved;
      },
      saveCeiling: async (ceiling) => {
        if (!this.#finished && this.#pod) await saveCeiling(this.#ctx, this.#pod.name, ceiling);
      },
    };
  }
}
