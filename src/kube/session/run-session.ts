/**
 * A run or predefined-app session in one pod (kubernetes.md §2–3): create the pod, follow it
 * through the shared pod watcher to Running, then attach the terminal, publish routes, relay
 * the kernel's debug stream and watch reachability; map the pod's end to the session's
 * terminal status; delete it on stop.
 */
import type { V1Pod } from "@kubernetes/client-node";
import type { BackendCallbacks, StartSpec, Workload } from "../../sessions/backend.ts";
import { SessionStartError } from "../../sessions/backend.ts";
import { withDeadline } from "../api.ts";
import { type Attachment, attachContainer } from "../io/attach.ts";
import { BundleArchiveError, bundleArchive } from "../bundle-archive.ts";
import { type KubeContext, runnerLine } from "../context.ts";
import { relayDebugStream } from "../io/debug-relay.ts";
import { watchReachability } from "../io/reachability.ts";
import { publishService } from "../routing/routing.ts";
import { appPod } from "../specs/app-pod.ts";
import { clampLimits } from "../specs/limits.ts";
import { RUN_INSPECT_PORT, runPod } from "../specs/run-pod.ts";
import { readSessionConfig, type SessionRecord } from "../specs/session-record.ts";
import { apiReason, isNotFound } from "../status/api-error.ts";
import { sessionEndpoints } from "../status/endpoints.ts";
import { provisionMessage } from "../status/provision.ts";
import { podFailureMessage, terminalStatus, type TerminalStatus } from "../status/terminal.ts";

const CREATE_DEADLINE_MS = 30_000;
/** Output kept from the pod log when the terminal never saw any (an app that exited at once). */
const LOG_BACKFILL_BYTES = 1024 * 1024;
const SESSION_CONTAINER = "session";
/** Keystrokes typed between `running` and the attach are kept, up to this many bytes. */
const MAX_EARLY_STDIN_BYTES = 64 * 1024;

/** The session's facts as its pod records them. */
export function sessionFacts(spec: StartSpec): Omit<SessionRecord, "envNames" | "agent"> {
  return {
    sessionId: spec.sessionId,
    mode: spec.mode,
    createdAt: spec.createdAt,
    apps: spec.apps,
    inspect: spec.inspect,
    selfContained: spec.selfContained,
    config: readSessionConfig(spec.config),
  };
}

export class RunSession {
  readonly #ctx: KubeContext;
  readonly #spec: StartSpec;
  readonly #callbacks: BackendCallbacks;
  readonly #app: StartSpec["apps"][number];
  readonly #abort = new AbortController();
  #podName = "";
  #unsubscribe: () => void = () => undefined;
  #deadline: NodeJS.Timeout | undefined;
  #lastProvision: string | undefined;
  #runningSeen = false;
  #finished = false;
  #sawOutput = false;
  #attachment: Attachment | undefined;
  #earlyStdin: Buffer[] = [];
  #earlyStdinBytes = 0;
  #podDeleted = false;
  #startSettled = false;
  #resolveStart!: () => void;
  #rejectStart!: (error: Error) => void;
  readonly #started = new Promise<void>((resolve, reject) => {
    this.#resolveStart = resolve;
    this.#rejectStart = reject;
  });
  #resolveDone!: () => void;
  readonly done = new Promise<void>((resolve) => (this.#resolveDone = resolve));

  constructor(ctx: KubeContext, spec: StartSpec, callbacks: BackendCallbacks) {
    const app = spec.apps[0];
    if (!app) throw new Error("a run session has exactly one app");
    this.#ctx = ctx;
    this.#spec = spec;
    this.#callbacks = callbacks;
    this.#app = app;
  }

  /** Creates the pod and settles once it runs (or the start fails). */
  async start(): Promise<Workload> {
    const pod = await this.#buildPod();
    this.#follow(pod.metadata!.name!);
    try {
      await withDeadline(
        this.#ctx.api.core.createNamespacedPod({ namespace: this.#ctx.config.sessionPods.namespace, body: pod }),
        CREATE_DEADLINE_MS,
        "the pod create call",
      );
    } catch (error) {
      this.#release();
      throw new SessionStartError("create", `could not create the session pod: ${apiReason(error)}`, { cause: error });
    }
    this.#deadline = setTimeout(() => {
      const pod = this.#ctx.watcher.get(this.#podName);
      const detail = pod ? ` (${podFailureMessage(pod)})` : "";
      void this.#failStart(`pod did not reach Running within the start deadline${detail}`);
    }, this.#ctx.timings.runStartDeadlineMs);
    this.#deadline.unref();
    // A stop before Running ends the start now rather than at its deadline.
    const stopRequested = this.#callbacks.stopRequested;
    if (stopRequested.aborted) void this.#failStart("the session was stopped");
    else stopRequested.addEventListener("abort", () => void this.#failStart("the session was stopped"), { once: true });
    const cached = this.#ctx.watcher.get(this.#podName);
    if (cached) this.#onPod(cached);
    await this.#started;
    return this.#workload();
  }

  /** Takes over a pod an earlier supervisor created (restart safety). */
  async adopt(pod: V1Pod): Promise<Workload> {
    this.#follow(pod.metadata!.name!);
    this.#onPod(this.#ctx.watcher.get(this.#podName) ?? pod);
    if (!this.#finished && !this.#runningSeen) {
      // Still Pending: the start deadline was the earlier process's; give it a fresh one.
      this.#deadline = setTimeout(() => void this.#failStart("pod did not reach Running within the start deadline"), this.#ctx.timings.runStartDeadlineMs);
      this.#deadline.unref();
    }
    await this.#started.catch(() => undefined);
    return this.#workload();
  }

  async #buildPod(): Promise<V1Pod> {
    const { config } = this.#ctx;
    const common = {
      session: sessionFacts(this.#spec),
      env: this.#spec.env,
      settings: config.sessionPods,
      defaultImage: config.RUNNER_IMAGE,
    };
    const pod = this.#spec.selfContained
      ? appPod({ ...common, limits: clampLimits(config.appCeilings) })
      : runPod({
          ...common,
          limits: clampLimits(config.runCeilings),
          ...(await this.#builtImage()),
          bundleUrl: await this.#stageBundle(),
        });
    const extra = this.#ctx.podAnnotations(this.#spec);
    pod.metadata!.annotations = { ...pod.metadata!.annotations, ...extra };
    return pod;
  }

  /** The build path (§2.10) when the runner builds images; nothing otherwise. */
  async #builtImage(): Promise<{ builtImage?: string }> {
    const builder = this.#ctx.builder;
    if (!builder) return {};
    const config = readSessionConfig(this.#spec.config);
    const builtImage = await builder.ensureImage(
      {
        sessionId: this.#spec.sessionId,
        app: this.#app.name,
        bundle: this.#spec.bundle,
        baseImage: config.image ?? this.#ctx.config.RUNNER_IMAGE,
        pullPolicy: config.pullPolicy ?? "missing",
        entryRelativePath: this.#app.entryRelativePath,
        ...(typeof this.#spec.config.registryUrl === "string" && { registryUrl: this.#spec.config.registryUrl }),
      },
      (message, done) => this.#callbacks.onProgress("build", message, done, this.#app.name),
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

  #follow(podName: string): void {
    this.#podName = podName;
    // Subscribed before the create, so no event about the new pod can be missed.
    this.#unsubscribe = this.#ctx.watcher.subscribe(podName, (pod) => this.#onPod(pod));
  }

  #onPod(pod: V1Pod | undefined): void {
    if (this.#finished) return;
    if (!pod) {
      if (!this.#runningSeen) void this.#failStart("pod disappeared before reaching Running");
      else void this.#finish(this.#callbacks.isUserStopped() ? { kind: "stopped" } : { kind: "failed", message: "pod disappeared" });
      return;
    }
    const phase = pod.status?.phase;
    if (!this.#runningSeen) {
      const message = provisionMessage(pod);
      if (message !== undefined && message !== this.#lastProvision) {
        this.#lastProvision = message;
        this.#callbacks.onProgress("provision", message, undefined, this.#app.name);
      }
    }
    if (phase === "Running" && !this.#runningSeen) {
      void this.#whenRunning(pod);
    } else if (phase === "Succeeded") {
      // A pod that ran and finished between two events still ran: report it, then its end.
      if (!this.#runningSeen) this.#announceRunning();
      void this.#finish(terminalStatus(pod, this.#callbacks.isUserStopped()));
    } else if (phase === "Failed") {
      if (!this.#runningSeen) void this.#failStart(podFailureMessage(pod));
      else void this.#finish(terminalStatus(pod, this.#callbacks.isUserStopped()));
    }
  }

  #announceRunning(): void {
    this.#runningSeen = true;
    clearTimeout(this.#deadline);
    this.#callbacks.onStatus({
      kind: "running",
      endpoints: sessionEndpoints(this.#app.ports, {
        sessionId: this.#spec.sessionId,
        baseDomain: this.#ctx.config.routing.baseDomain,
        routed: this.#ctx.router !== undefined,
      }),
    });
    this.#settleStart();
  }

  /** §2.6, in order: running, attach, routing, debug relay, reachability. */
  async #whenRunning(pod: V1Pod): Promise<void> {
    this.#announceRunning();
    await this.#attach();
    await this.#publishRoutes(pod);
    const podIp = pod.status?.podIP;
    const signal = this.#abort.signal;
    if (this.#spec.inspect) {
      if (podIp) void relayDebugStream(`http://${podIp}:${RUN_INSPECT_PORT}/events`, (frame) => this.#callbacks.onDebug(this.#app.name, frame), signal);
      else this.#say("debug stream unavailable: pod IP unknown");
    }
    const tcpPorts = this.#app.ports.filter((port) => port.protocol === "tcp").map((port) => port.port);
    if (tcpPorts.length > 0) {
      watchReachability(podIp, tcpPorts, (port, state) => this.#callbacks.onReachability(this.#app.name, port, state), signal);
    }
  }

  async #attach(): Promise<void> {
    if (this.#finished) return;
    try {
      this.#attachment = await attachContainer(this.#ctx.api.kubeConfig, {
        namespace: this.#ctx.config.sessionPods.namespace,
        pod: this.#podName,
        container: SESSION_CONTAINER,
        tty: true,
        onOutput: (bytes) => {
          this.#sawOutput = true;
          this.#callbacks.onOutput(this.#app.name, bytes, "tty");
        },
      });
    } catch (error) {
      this.#say(`failed to attach PTY: ${apiReason(error)}`);
      return;
    }
    const attachment = this.#attachment;
    for (const bytes of this.#earlyStdin.splice(0)) attachment.writeStdin(bytes);
    this.#earlyStdinBytes = 0;
    void attachment.closed.then(() => {
      // A stream cut while the pod still runs (network, apiserver restart) is re-attached.
      if (this.#finished || this.#attachment !== attachment) return;
      setTimeout(() => {
        if (!this.#finished && this.#ctx.watcher.get(this.#podName)?.status?.phase === "Running") void this.#attach();
      }, this.#ctx.timings.reattachDelayMs).unref();
    });
  }

  async #publishRoutes(pod: V1Pod): Promise<void> {
    const router = this.#ctx.router;
    if (!router || this.#app.ports.length === 0 || this.#finished) return;
    const owner = { name: this.#podName, uid: pod.metadata?.uid ?? "" };
    try {
      await publishService(this.#ctx.api, {
        sessionId: this.#spec.sessionId,
        ports: this.#app.ports,
        owner,
        namespace: this.#ctx.config.sessionPods.namespace,
        managedBy: this.#ctx.config.sessionPods.managedBy,
        replace: false,
      });
      const hosts = await router.publish({ sessionId: this.#spec.sessionId, ports: this.#app.ports, owner });
      router.watchRouteHealth(this.#spec.sessionId, hosts, this.#abort.signal, (line) => this.#say(line));
    } catch (error) {
      this.#say(`could not publish the session route: ${apiReason(error)}`);
    }
  }

  #writeStdin(bytes: Uint8Array): void {
    if (this.#attachment) return this.#attachment.writeStdin(bytes);
    if (this.#finished || this.#earlyStdinBytes + bytes.byteLength > MAX_EARLY_STDIN_BYTES) return;
    this.#earlyStdin.push(Buffer.from(bytes));
    this.#earlyStdinBytes += bytes.byteLength;
  }

  #say(text: string): void {
    this.#callbacks.onOutput(this.#app.name, runnerLine(text), "tty");
  }

  #settleStart(): void {
    if (this.#startSettled) return;
    this.#startSettled = true;
    this.#resolveStart();
  }

  /** §2.4 step 5: clean up and fail the start; the core reports it on the stream. */
  async #failStart(message: string): Promise<void> {
    if (this.#startSettled || this.#finished) return;
    this.#startSettled = true;
    this.#finished = true;
    this.#release();
    let failure: Error = new SessionStartError("start", `pod failed to start: ${message}`);
    try {
      await this.#deletePod();
    } catch (error) {
      failure = new SessionStartError("start", `pod failed to start: ${message}; deleting it failed: ${apiReason(error)}`, { cause: error });
    }
    this.#rejectStart(failure);
    this.#resolveDone();
  }

  async #finish(status: TerminalStatus): Promise<void> {
    if (this.#finished) return;
    this.#finished = true;
    this.#release();
    if (!this.#sawOutput && status.kind !== "stopped") await this.#backfillOutput();
    this.#callbacks.onStatus(status);
    this.#attachment?.close();
    this.#settleStart();
    this.#resolveDone();
    // The history lives in the supervisor now: an ended pod would only hold quota. Its
    // Service and routes go with it (owner references).
    await this.#deletePod().catch((error: unknown) => this.#ctx.log.warn("deleting an ended session pod failed", { sessionId: this.#spec.sessionId, reason: apiReason(error) }));
  }

  /** The terminal never saw the app's output (it exited before the attach): take it from the log. */
  async #backfillOutput(): Promise<void> {
    try {
      const log = await this.#ctx.api.core.readNamespacedPodLog({
        name: this.#podName,
        namespace: this.#ctx.config.sessionPods.namespace,
        container: SESSION_CONTAINER,
        limitBytes: LOG_BACKFILL_BYTES,
      });
      if (log) this.#callbacks.onOutput(this.#app.name, Buffer.from(log), "tty");
    } catch {
      // The log is a courtesy; the status matters.
    }
  }

  #release(): void {
    clearTimeout(this.#deadline);
    this.#abort.abort();
    this.#unsubscribe();
    this.#ctx.bundles.drop(this.#spec.sessionId);
  }

  /** Deletes the pod once: a stop deletes it before the session's end would. */
  async #deletePod(): Promise<void> {
    if (this.#podDeleted) return;
    try {
      await this.#ctx.api.core.deleteNamespacedPod({
        name: this.#podName,
        namespace: this.#ctx.config.sessionPods.namespace,
        gracePeriodSeconds: 0,
      });
    } catch (error) {
      if (!isNotFound(error)) throw error;
    }
    this.#podDeleted = true;
  }

  #workload(): Workload {
    return {
      done: this.done,
      writeStdin: (_app, bytes) => this.#writeStdin(bytes),
      resize: (_app, cols, rows) => this.#attachment?.resize(cols, rows),
      stop: async () => {
        if (this.#finished) return;
        await this.#deletePod();
        await this.#finish({ kind: "stopped" });
      },
    };
  }
}
