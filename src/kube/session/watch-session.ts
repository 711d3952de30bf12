/**
 * A watch session (kubernetes.md §4): one pod holding a shared workspace, the runner-owned
 * `workspace` container serving it, one `app-<name>` container per app running
 * `telo run --watch`, and optionally the co-resident agent. The session outlives its runs and
 * its pods: an app-set change recreates the pod under a new name, a suspend deletes it, and a
 * resume is a fresh start under the same session id.
 *
 * Pods are followed through the shared pod watcher only, never a watch of their own. Every
 * bring-up that created a pod and then failed deletes that pod again (the reference left it).
 */
import type { V1Pod } from "@kubernetes/client-node";
import { setTimeout as sleep } from "node:timers/promises";
import * as v from "valibot";
import type { DebugFrame, PortMapping, ResolvedApp, RunStatus, WorkspaceChangeSet } from "../../contract/wire.ts";
import type { BackendCallbacks, StartSpec, Workload } from "../../sessions/backend.ts";
import { SessionStartError } from "../../sessions/backend.ts";
import { withDeadline } from "../api.ts";
import { type Attachment, attachContainer } from "../io/attach.ts";
import { type KubeContext, runnerLine } from "../context.ts";
import { relayDebugStream } from "../io/debug-relay.ts";
import { type AgentPort, type PortChange, planPortChange, routedPorts } from "./port-changes.ts";
import { watchReachability } from "../io/reachability.ts";
import { publishService } from "../routing/routing.ts";
import { sessionFacts } from "./run-session.ts";
import { clampLimits } from "../specs/limits.ts";
import { appContainerName, watchPodName, watchPodSuffix, workspaceConfigMapName } from "../specs/names.ts";
import { WATCH_INSPECT_BASE_PORT, watchPod } from "../specs/watch-pod.ts";
import { workspaceConfigMap } from "../specs/workspace-configmap.ts";
import { apiFailureMessage, apiReason, isConflict, isNotFound } from "../status/api-error.ts";
import { agentEndpoint, type EndpointContext, sessionEndpoints } from "../status/endpoints.ts";
import { appRunEnds } from "../status/run-ended.ts";
import { bringUpState, watchSessionEnd } from "../status/watch-pod-status.ts";
import type { TerminalStatus } from "../status/terminal.ts";
import { WORKSPACE_APP_MANIFEST } from "../workspace-app/manifest.ts";
import { type PodWorkspaceClient, workspaceClient } from "./workspace-client.ts";
import { restoreChangeSet, seedChangeSet, touchChangeSet } from "./workspace-seed.ts";

/** §4.3 step 2: the pod must run with an IP by then. */
const POD_START_DEADLINE_MS = 180_000;
/** §4.3 step 3: then the workspace surface must answer, probed every half second. */
const WORKSPACE_READY_DEADLINE_MS = 120_000;
const WORKSPACE_POLL_MS = 500;

export type WatchSessionOptions = {
  /** RUNNER_WATCH_MAX_TTL_SECONDS: the pod's activeDeadlineSeconds. */
  ttlSeconds: number;
};

const CALL_DEADLINE_MS = 30_000;

/** Makes every pod name of this process unique even within one millisecond (§4.2). */
let podCounter = 0;

/** Fresh on every pod (re)creation: the previous pod may still be terminating under its name. */
function nextPodSuffix(): string {
  podCounter += 1;
  return watchPodSuffix(Date.now(), podCounter);
}

/**
 * Ensures the content-addressed workspace-app ConfigMap (§4.1): read → present → done; 404 →
 * create, where a 409 means a concurrent creator wrote the same bytes. Never updated.
 */
export async function ensureWorkspaceConfigMap(ctx: KubeContext): Promise<void> {
  const { namespace, managedBy } = ctx.config.sessionPods;
  const body = workspaceConfigMap({ manifest: WORKSPACE_APP_MANIFEST, namespace, managedBy });
  const name = body.metadata!.name!;
  try {
    await withDeadline(ctx.api.core.readNamespacedConfigMap({ name, namespace }), CALL_DEADLINE_MS, `reading ConfigMap ${name}`);
    return;
  } catch (error) {
    if (!isNotFound(error)) {
      throw new SessionStartError("create", apiFailureMessage("could not read the workspace-app ConfigMap", error), { cause: error });
    }
  }
  try {
    await withDeadline(ctx.api.core.createNamespacedConfigMap({ namespace, body }), CALL_DEADLINE_MS, `creating ConfigMap ${name}`);
  } catch (error) {
    if (!isConflict(error)) {
      throw new SessionStartError("create", apiFailureMessage("could not create the workspace-app ConfigMap", error), { cause: error });
    }
  }
}

const DeclaredPortsSchema = v.object({
  ports: v.array(v.looseObject({ port: v.unknown(), protocol: v.optional(v.unknown()) })),
});

/**
 * The ports a `Kernel.PortsResolved` frame declares (contract.md §9.3): non-integer ports are
 * skipped, `"udp"` is udp and anything else tcp. Undefined for any other frame.
 */
export function declaredPorts(frame: DebugFrame): PortMapping[] | undefined {
  if (frame.event !== "Kernel.PortsResolved") return undefined;
  const parsed = v.safeParse(DeclaredPortsSchema, frame.payload);
  if (!parsed.success) return undefined;
  return parsed.output.ports.flatMap(({ port, protocol }) =>
    typeof port === "number" && Number.isInteger(port) && port >= 1 && port <= 65535
      ? [{ port, protocol: protocol === "udp" ? ("udp" as const) : ("tcp" as const) }]
      : [],
  );
}

/** The `endpoints` report of an accepted port change; empty lists are left out. */
export function endpointReport(change: PortChange, context: EndpointContext) {
  return {
    ...(change.added.length > 0 && { added: sessionEndpoints(change.added, context) }),
    ...(change.removed.length > 0 && { removed: sessionEndpoints(change.removed, context) }),
    ...(change.rejected.length > 0 && { rejected: change.rejected }),
  };
}

/** A bring-up that ended before the pod served; the pod it created (if any) is deleted. */
class BringUpFailure extends Error {}

/** What one live pod holds; cleared on teardown, so a late callback of an old pod finds nothing. */
type Runtime = {
  podName: string;
  podUid: string;
  podIp: string;
  workspace: PodWorkspaceClient;
  attachments: Map<string, Attachment>;
  /** Aborts relays, reachability, route health and re-attaches of this pod. */
  abort: AbortController;
  /** Route health of the last publish; replaced on every republish. */
  routeHealth: AbortController | undefined;
  unsubscribe: () => void;
  /** Apps whose container end was reported for this pod (§4.8: once per container per pod). */
  ended: Set<string>;
};

export class WatchSession {
  readonly #ctx: KubeContext;
  readonly #spec: StartSpec;
  readonly #callbacks: BackendCallbacks;
  readonly #ttlSeconds: number;
  #apps: ResolvedApp[];
  #runtime: Runtime | undefined;
  #finished = false;
  /** App-set changes run one after the other. */
  #appChange: Promise<void> = Promise.resolve();
  /** Port changes republish one at a time, in the order the kernels declared them. */
  #republishing: Promise<void> = Promise.resolve();
  #resolveDone!: () => void;
  readonly done = new Promise<void>((resolve) => (this.#resolveDone = resolve));

  constructor(ctx: KubeContext, spec: StartSpec, callbacks: BackendCallbacks, options: WatchSessionOptions) {
    this.#ctx = ctx;
    this.#spec = spec;
    this.#callbacks = callbacks;
    this.#ttlSeconds = options.ttlSeconds;
    this.#apps = spec.apps.map((app) => ({ ...app, ports: [...app.ports] }));
  }

  /** Start or resume: the ConfigMap, a new pod seeded with the bundle, then `running`. */
  async start(): Promise<Workload> {
    try {
      await ensureWorkspaceConfigMap(this.#ctx);
      await this.#bringUp({ seed: seedChangeSet(this.#spec.bundle.files) });
    } catch (error) {
      this.#end();
      throw error;
    }
    this.#announceRunning();
    return this.#workload();
  }

  /** Takes over a pod an earlier supervisor created (restart safety): its workspace is kept as it is. */
  async adopt(pod: V1Pod): Promise<Workload> {
    try {
      await this.#bringUp({ existing: pod });
    } catch (error) {
      this.#end();
      throw error;
    }
    this.#announceRunning();
    return this.#workload();
  }

  #endpointContext(): EndpointContext {
    return { sessionId: this.#spec.sessionId, baseDomain: this.#ctx.config.routing.baseDomain, routed: this.#ctx.router !== undefined };
  }

  #agentPort(): AgentPort | undefined {
    const agent = this.#spec.agent;
    return agent?.port !== undefined ? { name: agent.name, port: agent.port } : undefined;
  }

  /** §4.3 step 9: every app's ports; the agent's endpoint separately, never among them. */
  #announceRunning(): void {
    const context = this.#endpointContext();
    const agent = this.#agentPort();
    const status: RunStatus = {
      kind: "running",
      endpoints: sessionEndpoints(
        this.#apps.flatMap((app) => app.ports),
        context,
      ),
      ...(agent && { agent: agentEndpoint(agent.port, context) }),
    };
    this.#callbacks.onStatus(status);
  }

  /**
   * §4.3: create the pod (or take the existing one), wait for Running with an IP, wait for the
   * workspace surface, then attach, write `seed`, publish, relay and watch. Throws a
   * SessionStartError; a pod created here is deleted again on any failure.
   */
  async #bringUp(input: { seed?: WorkspaceChangeSet; existing?: V1Pod }): Promise<void> {
    const suffix = input.existing ? undefined : nextPodSuffix();
    const podName = input.existing?.metadata?.name ?? watchPodName(this.#spec.sessionId, suffix!);
    // The attempt ends on a stop, or when the pod dies before it is live.
    const attempt = new AbortController();
    const onStop = () => attempt.abort(new BringUpFailure("the session was stopped"));
    const stopRequested = this.#callbacks.stopRequested;
    if (stopRequested.aborted) onStop();
    else stopRequested.addEventListener("abort", onStop, { once: true });
    const follow = this.#followBringUp(podName, attempt);
    try {
      if (suffix !== undefined) await this.#createPod(suffix);
      follow.check();
      const pod = await follow.running;
      const podIp = pod.status!.podIP!;
      const workspace = workspaceClient(podIp);
      await this.#waitForWorkspace(workspace, attempt.signal);
      await this.#goLive({ podName, podUid: pod.metadata?.uid ?? "", podIp, workspace }, input.seed, attempt.signal);
      // A stop that arrived while going live: the runtime it could not see is torn down now.
      if (attempt.signal.aborted) throw attempt.signal.reason;
      // The pod ended while going live; its terminal status is out already.
      if (this.#finished) throw new BringUpFailure("the session pod ended while starting");
    } catch (error) {
      follow.cancel();
      const failure = await this.#discardPod(podName, error);
      throw failure;
    } finally {
      stopRequested.removeEventListener("abort", onStop);
    }
    follow.cancel();
  }

  async #createPod(nameSuffix: string): Promise<void> {
    const { config } = this.#ctx;
    const spec = { ...this.#spec, apps: this.#apps };
    const pod = watchPod({
      session: sessionFacts(spec),
      env: this.#spec.env,
      settings: config.sessionPods,
      limits: clampLimits(config.appCeilings),
      ttlSeconds: this.#ttlSeconds,
      defaultImage: config.RUNNER_IMAGE,
      nameSuffix,
      workspaceConfigMap: workspaceConfigMapName(WORKSPACE_APP_MANIFEST),
      ...(this.#spec.agent && { agent: this.#spec.agent }),
    });
    pod.metadata!.annotations = { ...pod.metadata!.annotations, ...this.#ctx.podAnnotations(spec) };
    try {
      await withDeadline(
        this.#ctx.api.core.createNamespacedPod({ namespace: config.sessionPods.namespace, body: pod }),
        CALL_DEADLINE_MS,
        "the pod create call",
      );
    } catch (error) {
      throw new SessionStartError("create", `could not create the session pod: ${apiReason(error)}`, { cause: error });
    }
  }

  /**
   * Follows the pod through the shared watcher from before its creation (no event can be
   * missed): `running` settles once it runs with an IP, or rejects on its end, the start
   * deadline or a stop; after that, a pod that dies aborts `attempt` so the workspace wait
   * ends at once instead of at its own deadline.
   */
  #followBringUp(podName: string, attempt: AbortController): { running: Promise<V1Pod>; check(): void; cancel(): void } {
    let lastProvision: string | undefined;
    let settled = false;
    let resolveRunning!: (pod: V1Pod) => void;
    let rejectRunning!: (error: Error) => void;
    const running = new Promise<V1Pod>((resolve, reject) => {
      resolveRunning = resolve;
      rejectRunning = reject;
    });
    // Handled by whoever awaits it; a failure before the create awaits it must not go unhandled.
    running.catch(() => undefined);
    const onPod = (pod: V1Pod | undefined) => {
      const state = bringUpState(pod);
      if (state.kind === "failed") {
        if (!settled) fail(new BringUpFailure(state.message));
        else attempt.abort(new BringUpFailure(state.message));
      } else if (!settled && state.kind === "running") {
        settled = true;
        clearTimeout(deadline);
        resolveRunning(pod!);
      } else if (!settled && state.kind === "waiting" && state.provision !== undefined && state.provision !== lastProvision) {
        lastProvision = state.provision;
        this.#callbacks.onProgress("provision", state.provision);
      }
    };
    const fail = (error: Error) => {
      if (settled) return;
      settled = true;
      clearTimeout(deadline);
      rejectRunning(error);
    };
    const unsubscribe = this.#ctx.watcher.subscribe(podName, onPod);
    const deadline = setTimeout(() => fail(new BringUpFailure("pod did not reach Running within the start deadline")), POD_START_DEADLINE_MS);
    deadline.unref();
    const onAbort = () => fail(attempt.signal.reason as Error);
    attempt.signal.addEventListener("abort", onAbort, { once: true });
    if (attempt.signal.aborted) onAbort();
    return {
      running,
      check: () => {
        const cached = this.#ctx.watcher.get(podName);
        if (cached) onPod(cached);
      },
      cancel: () => {
        fail(new BringUpFailure("bring-up cancelled"));
        unsubscribe();
        attempt.signal.removeEventListener("abort", onAbort);
      },
    };
  }

  /** §4.3 step 3: `GET /workspace` every poll interval until it answers or the deadline passes. */
  async #waitForWorkspace(workspace: PodWorkspaceClient, signal: AbortSignal): Promise<void> {
    this.#callbacks.onProgress("boot", "Starting workspace");
    const deadline = performance.now() + WORKSPACE_READY_DEADLINE_MS;
    let lastError = "no response";
    for (;;) {
      if (signal.aborted) throw signal.reason;
      try {
        await workspace.tree(signal);
        return;
      } catch (error) {
        lastError = error instanceof Error ? error.message : String(error);
      }
      if (signal.aborted) throw signal.reason;
      if (performance.now() >= deadline) throw new SessionStartError("start", `workspace container did not become ready: ${lastError}`);
      await sleep(WORKSPACE_POLL_MS, undefined, { signal }).catch(() => undefined);
    }
  }

  async #write(workspace: PodWorkspaceClient, changes: WorkspaceChangeSet, signal: AbortSignal, what: string): Promise<void> {
    try {
      await workspace.apply(changes, signal);
    } catch (error) {
      if (signal.aborted) throw signal.reason;
      throw new SessionStartError("start", `${what} failed: ${error instanceof Error ? error.message : String(error)}`, { cause: error });
    }
  }

  /**
   * A failed bring-up: delete the pod it may have created (grace 0, 404 ok) and say why it
   * failed. A delete that fails too is part of the message, as for run sessions.
   */
  async #discardPod(podName: string, error: unknown): Promise<Error> {
    const failure =
      error instanceof SessionStartError
        ? error
        : error instanceof BringUpFailure
          ? new SessionStartError("start", error.message, { cause: error })
          : new SessionStartError("start", error instanceof Error ? error.message : String(error), { cause: error });
    if (this.#runtime?.podName === podName) {
      this.#releaseRuntime();
    }
    if (failure.stage === "create") return failure;
    try {
      await this.#deletePod(podName);
    } catch (deleteError) {
      return new SessionStartError("start", `${failure.message}; deleting the pod failed: ${apiReason(deleteError)}`, { cause: deleteError });
    }
    return failure;
  }

  /**
   * §4.3 steps 4–8: record the runtime, attach every app, seed, publish, relay, reach, watch.
   * Unlike the reference, the apps are attached before the seed: their containers wait for
   * their entries, so what a kernel prints on its first load (a manifest error, say) reaches
   * the terminal instead of racing the attach.
   */
  async #goLive(
    pod: { podName: string; podUid: string; podIp: string; workspace: PodWorkspaceClient },
    seed: WorkspaceChangeSet | undefined,
    signal: AbortSignal,
  ): Promise<void> {
    const runtime: Runtime = {
      ...pod,
      attachments: new Map(),
      abort: new AbortController(),
      routeHealth: undefined,
      unsubscribe: () => undefined,
      ended: new Set(),
    };
    this.#runtime = runtime;
    await Promise.all(this.#apps.map((app) => this.#attach(runtime, app)));
    if (seed) await this.#write(runtime.workspace, seed, signal, "seeding the workspace");
    try {
      await this.#publish(runtime);
    } catch (error) {
      throw new SessionStartError("start", apiFailureMessage("could not publish the session's endpoints", error), { cause: error });
    }
    this.#apps.forEach((app, index) => {
      void relayDebugStream(
        `http://${runtime.podIp}:${WATCH_INSPECT_BASE_PORT + index}/events`,
        (frame) => {
          this.#onPortsDeclared(runtime, app.name, frame);
          this.#callbacks.onDebug(app.name, frame);
        },
        runtime.abort.signal,
      );
      this.#watchReachability(runtime, app.name, app.ports);
    });
    runtime.unsubscribe = this.#ctx.watcher.subscribe(runtime.podName, (current) => this.#onLivePod(runtime, current));
    const cached = this.#ctx.watcher.get(runtime.podName);
    // The pod may have changed (an app container ended) while the bring-up was busy.
    this.#onLivePod(runtime, cached);
  }

  /** §4.5: one attach per app; `tty` apps get one merged stream, `streams` apps stdout and stderr. */
  async #attach(runtime: Runtime, app: ResolvedApp): Promise<void> {
    if (this.#runtime !== runtime) return;
    const tty = app.io === "tty";
    let attachment: Attachment;
    try {
      attachment = await attachContainer(this.#ctx.api.kubeConfig, {
        namespace: this.#ctx.config.sessionPods.namespace,
        pod: runtime.podName,
        container: appContainerName(app.name),
        tty,
        onOutput: (bytes, stream) => this.#callbacks.onOutput(app.name, bytes, tty ? "tty" : stream),
      });
    } catch (error) {
      this.#callbacks.onOutput(app.name, runnerLine(`failed to attach: ${apiReason(error)}`), tty ? "tty" : "stderr");
      return;
    }
    if (this.#runtime !== runtime) {
      attachment.close();
      return;
    }
    runtime.attachments.set(app.name, attachment);
    void attachment.closed.then(() => {
      // A stream cut while the container still runs (network, apiserver restart) is re-attached;
      // a container that ended stays detached (restartPolicy Never: it will not come back).
      if (this.#runtime !== runtime || runtime.attachments.get(app.name) !== attachment) return;
      runtime.attachments.delete(app.name);
      setTimeout(() => {
        if (this.#runtime === runtime && this.#containerRunning(runtime.podName, app.name)) void this.#attach(runtime, app);
      }, this.#ctx.timings.reattachDelayMs).unref();
    });
  }

  #containerRunning(podName: string, appName: string): boolean {
    const status = this.#ctx.watcher.get(podName)?.status?.containerStatuses?.find((s) => s.name === appContainerName(appName));
    return status?.state?.running !== undefined;
  }

  /**
   * §4.6: the Service over every routed port (create-or-replace: an earlier pod of this session
   * may have made it), then the routes, always (an empty set drops stale ones), then route
   * health for the new hosts. Rejects with the API error.
   */
  async #publish(runtime: Runtime): Promise<void> {
    const router = this.#ctx.router;
    if (!router) return;
    const ports = routedPorts(this.#apps, this.#agentPort());
    const owner = { name: runtime.podName, uid: runtime.podUid };
    if (ports.length > 0) {
      await publishService(this.#ctx.api, {
        sessionId: this.#spec.sessionId,
        ports,
        owner,
        namespace: this.#ctx.config.sessionPods.namespace,
        managedBy: this.#ctx.config.sessionPods.managedBy,
        replace: true,
      });
    }
    const hosts = await router.publish({ sessionId: this.#spec.sessionId, ports, owner });
    if (this.#runtime !== runtime) return;
    runtime.routeHealth?.abort();
    const routeHealth = new AbortController();
    runtime.abort.signal.addEventListener("abort", () => routeHealth.abort(), { once: true });
    runtime.routeHealth = routeHealth;
    router.watchRouteHealth(this.#spec.sessionId, hosts, routeHealth.signal);
  }

  #watchReachability(runtime: Runtime, appName: string, ports: readonly PortMapping[]): void {
    const tcp = ports.filter((port) => port.protocol === "tcp").map((port) => port.port);
    if (tcp.length === 0) return;
    watchReachability(runtime.podIp, tcp, (port, state) => this.#callbacks.onReachability(appName, port, state), runtime.abort.signal);
  }

  /** §4.6 "port change on reload": diff, accept or reject, republish, report, then reach. */
  #onPortsDeclared(runtime: Runtime, appName: string, frame: DebugFrame): void {
    const declared = declaredPorts(frame);
    const app = this.#apps.find((candidate) => candidate.name === appName);
    if (declared === undefined || !app || this.#runtime !== runtime) return;
    const change = planPortChange({
      current: app.ports,
      declared,
      otherApps: this.#apps.filter((other) => other !== app).flatMap((other) => other.ports),
      agent: this.#agentPort(),
    });
    if (!change) return;
    // The app's port list changes now, so a second declaration is diffed against this one.
    app.ports = change.ports;
    this.#republishing = this.#republishing.then(() => this.#republish(runtime, appName, change));
  }

  async #republish(runtime: Runtime, appName: string, change: PortChange): Promise<void> {
    if (this.#runtime !== runtime) return;
    try {
      await this.#publish(runtime);
    } catch (error) {
      if (this.#runtime !== runtime) return;
      this.#ctx.log.warn("republishing a watch session's endpoints failed", { sessionId: this.#spec.sessionId, app: appName, error });
      const reason = apiReason(error);
      this.#callbacks.onEndpoints(appName, { rejected: change.added.map(({ port }) => ({ port, reason })) });
      return;
    }
    if (this.#runtime !== runtime) return;
    this.#callbacks.onEndpoints(appName, endpointReport(change, this.#endpointContext()));
    this.#watchReachability(runtime, appName, change.added);
  }

  /** §4.8 on every event of the live pod. */
  #onLivePod(runtime: Runtime, pod: V1Pod | undefined): void {
    if (this.#runtime !== runtime || this.#finished) return;
    const userStopped = this.#callbacks.isUserStopped();
    if (!pod) {
      void this.#finish(userStopped ? { kind: "stopped" } : { kind: "failed", message: "pod disappeared" });
      return;
    }
    if (!userStopped) {
      for (const end of appRunEnds(pod)) {
        if (runtime.ended.has(end.app)) continue;
        runtime.ended.add(end.app);
        this.#callbacks.onRunEnded(end.app, { reason: end.reason });
      }
    }
    const end = watchSessionEnd(pod, userStopped);
    if (end) void this.#finish(end);
  }

  /** The session ended on its own (pod ended or vanished): clean up, then report. */
  async #finish(status: TerminalStatus): Promise<void> {
    if (this.#finished) return;
    this.#finished = true;
    try {
      await this.#teardown();
    } catch (error) {
      this.#ctx.log.warn("deleting an ended watch pod failed", { sessionId: this.#spec.sessionId, error });
    }
    this.#callbacks.onStatus(status);
    this.#resolveDone();
  }

  /** Marks the session over without a status of its own (a failed start: the core reports it). */
  #end(): void {
    this.#finished = true;
    this.#resolveDone();
  }

  /** Stops following the pod and everything fed from it, without deleting it. */
  #releaseRuntime(): Runtime | undefined {
    const runtime = this.#runtime;
    if (!runtime) return undefined;
    this.#runtime = undefined;
    runtime.unsubscribe();
    runtime.abort.abort();
    for (const attachment of runtime.attachments.values()) attachment.close();
    runtime.attachments.clear();
    return runtime;
  }

  /** §4.4 teardown: the pod watch first, so the delete is not reported as the session failing. */
  async #teardown(): Promise<void> {
    const runtime = this.#releaseRuntime();
    if (runtime) await this.#deletePod(runtime.podName);
  }

  async #deletePod(podName: string): Promise<void> {
    try {
      await withDeadline(
        this.#ctx.api.core.deleteNamespacedPod({ name: podName, namespace: this.#ctx.config.sessionPods.namespace, gracePeriodSeconds: 0 }),
        CALL_DEADLINE_MS,
        "the pod delete call",
      );
    } catch (error) {
      if (!isNotFound(error)) throw error;
    }
  }

  /** §4.4: the entry's own bytes written back, which the kernel's file watcher sees as a change. */
  async #reload(appName: string): Promise<void> {
    const runtime = this.#runtime;
    const app = this.#apps.find((candidate) => candidate.name === appName);
    if (!runtime || !app) return;
    const current = await runtime.workspace.fileBase64(app.entryRelativePath);
    await runtime.workspace.apply(touchChangeSet(app.entryRelativePath, current));
  }

  /**
   * §4.4: a pod's containers are fixed at creation, so a new app set is a new pod: snapshot the
   * workspace, tear the pod down, bring up a new one with the snapshot written back instead of
   * the bundle (never the bundle: the workspace has moved on since the start).
   * A failure ends the session (the core reports it as `changing the app set failed`).
   */
  async #setApps(next: ResolvedApp[]): Promise<void> {
    const runtime = this.#runtime;
    if (!runtime || this.#finished) throw new Error("the session has no live pod");
    const snapshot = await runtime.workspace.snapshot();
    await this.#teardown();
    this.#apps = next.map((app) => ({ ...app, ports: [...app.ports] }));
    try {
      // Written back before the pod goes live, like a first seed: the app containers wait for
      // their entries, so no kernel loads a half-restored workspace.
      await this.#bringUp({ seed: restoreChangeSet(snapshot) });
    } catch (error) {
      await this.#teardown().catch(() => undefined);
      this.#end();
      throw error;
    }
    this.#announceRunning();
  }

  #workload(): Workload {
    const session = this;
    return {
      done: this.done,
      get workspace() {
        return session.#runtime?.workspace;
      },
      writeStdin: (app, bytes) => this.#runtime?.attachments.get(app)?.writeStdin(bytes),
      resize: (app, cols, rows) => this.#runtime?.attachments.get(app)?.resize(cols, rows),
      reload: (app) => this.#reload(app),
      setApps: (apps) => {
        // One change at a time: a second one would find the pod of the first torn down.
        const change = this.#appChange.then(() => this.#setApps(apps));
        this.#appChange = change.catch(() => undefined);
        return change;
      },
      suspend: async () => {
        if (this.#finished) return;
        this.#finished = true;
        try {
          await this.#teardown();
        } finally {
          this.#resolveDone();
        }
      },
      stop: async () => {
        if (this.#finished) return;
        this.#finished = true;
        try {
          await this.#teardown();
        } finally {
          this.#callbacks.onStatus({ kind: "stopped" });
          this.#resolveDone();
        }
      },
    };
  }
}
