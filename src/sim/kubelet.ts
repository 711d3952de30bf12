// The simulated kubelet: binds each new pod to the one node, gives it a loopback pod IP, pulls
// images, runs init containers in order, starts the containers with their servers, and writes
// status the way the kubelet does (phases, waiting/running/terminated states, conditions). It
// also enforces activeDeadlineSeconds and carries out graceful deletion.
import { setTimeout as sleep } from "node:timers/promises";
import { behaviourFor, type ContainerBehaviour, imageFailsToPull } from "./behaviour.ts";
import { ContainerProcess, type ExitStatus } from "./container.ts";
import { ContainerFs } from "./container-fs.ts";
import type { PodNetwork } from "./download.ts";
import type { EventRecorder, Involved } from "./events.ts";
import { driveKernel, inspectPort, KernelDebugStream, kernelVersionOf } from "./kernel-debug.ts";
import { listenContainerPort } from "./listeners.ts";
import { type KubeObject, timestamp } from "./object.ts";
import { lookupType } from "./resources.ts";
import type { Store } from "./store.ts";
import type { StoreEvent } from "./watch.ts";
import { serveWorkspace } from "./workspace.ts";
import { IpPool, portsFree } from "./ip-pool.ts";
import { NODE_NAME } from "./node.ts";
import { type ContainerRecord, containerId, PodRuntime, stopServers } from "./pod-runtime.ts";

const POD = lookupType("", "v1", "pods")!;
const SECRET = lookupType("", "v1", "secrets")!;
const CONFIG_MAP = lookupType("", "v1", "configmaps")!;

const WORKSPACE_PORT = 8099;

export interface KubeletOptions {
  /** Time a container spends in ContainerCreating; 0 starts pods at once (benchmarks). */
  podStartDelayMs: number;
  /** Interval between ErrImagePull and ImagePullBackOff reports, and between crash restarts. */
  backoffMs: number;
  logLimitBytes: number;
}

/**
 * What the kubelet puts in terminated.message: the file the program wrote (the
 * `termination-message` annotation stands in for /dev/termination-log), else, under
 * FallbackToLogsOnError and a failure, the log's tail (80 lines / 2 KiB at most).
 */
function terminationMessage(spec: KubeObject["spec"], behaviour: { "termination-message"?: string }, proc: ContainerProcess, exit: ExitStatus): string | undefined {
  if (behaviour["termination-message"]) return behaviour["termination-message"];
  if (exit.message) return exit.message;
  if (spec.terminationMessagePolicy !== "FallbackToLogsOnError" || exit.exitCode === 0) return undefined;
  const text = Buffer.concat(proc.logs.snapshot().map((e) => e.data)).toString("utf8");
  const tail = text.split("\n").slice(-81).join("\n");
  return tail.length > 2048 ? tail.slice(-2048) : tail;
}

function envOf(spec: KubeObject["spec"]): Record<string, string> {
  const env: Record<string, string> = {};
  for (const e of spec.env ?? []) if (typeof e.value === "string") env[e.name] = e.value;
  return env;
}

type KeyRef = { name?: string; key: string; optional?: boolean };
type EnvEntry = { name: string; value?: string; valueFrom?: { secretKeyRef?: KeyRef; configMapKeyRef?: KeyRef } };

/**
 * The env a container starts with, as the kubelet resolves it: plain values, and keys of the
 * pod's namespace's Secrets and ConfigMaps (`valueFrom`). A reference to a missing object or key
 * that is not optional is why the container cannot be created, in the kubelet's words.
 */
function resolveEnv(store: Store, namespace: string, spec: KubeObject["spec"]): { env: Record<string, string> } | { problem: string } {
  const env: Record<string, string> = {};
  for (const entry of (spec.env ?? []) as EnvEntry[]) {
    if (typeof entry.value === "string") env[entry.name] = entry.value;
    const secretRef = entry.valueFrom?.secretKeyRef;
    const mapRef = entry.valueFrom?.configMapKeyRef;
    const ref = secretRef ?? mapRef;
    if (!ref) continue;
    const [type, kind] = secretRef ? [SECRET, "Secret"] : [CONFIG_MAP, "ConfigMap"];
    const object = store.get(type, namespace, ref.name ?? "");
    const raw: string | undefined = object?.data?.[ref.key];
    if (raw !== undefined) env[entry.name] = secretRef ? Buffer.from(raw, "base64").toString("utf8") : raw;
    else if (ref.optional === true) continue;
    else if (!object) return { problem: `${kind.toLowerCase()} "${ref.name ?? ""}" not found` };
    else return { problem: `couldn't find key ${ref.key} in ${kind} ${namespace}/${ref.name ?? ""}` };
  }
  return { env };
}

/**
 * The kubelet's expansion of command and args: `$(NAME)` becomes the env var's value (left as
 * is when there is none), `$$` is a literal `$`. Anything else, `$NAME` included, is the shell's.
 */
function expandEnvReferences(arg: string, env: Record<string, string>): string {
  return arg.replace(/\$\$|\$\(([A-Za-z_][A-Za-z0-9_.-]*)\)/g, (ref, name?: string) => (name === undefined ? "$" : (env[name] ?? ref)));
}

/** What a container sees: the pod's emptyDir volumes at their mount paths over its own root. */
function containerFs(rt: PodRuntime, pod: KubeObject, spec: KubeObject["spec"]): ContainerFs {
  const emptyDirs = new Set<string>((pod.spec?.volumes ?? []).filter((v: { emptyDir?: unknown }) => v.emptyDir !== undefined).map((v: { name: string }) => v.name));
  const mounts = (spec.volumeMounts ?? [])
    .filter((m: { name: string }) => emptyDirs.has(m.name))
    .map((m: { name: string; mountPath: string; readOnly?: boolean }) => ({ mountPath: m.mountPath, tree: rt.volume(m.name), readOnly: m.readOnly === true }));
  return new ContainerFs(mounts, spec.securityContext?.readOnlyRootFilesystem === true, spec.workingDir ?? "/");
}

/** The ports a program listens on: its application's (`listen-ports`), else its container's declared ones. */
function listeningPorts(behaviour: ContainerBehaviour, declared: readonly { containerPort: number; protocol?: string }[]): { port: number; protocol: "tcp" | "udp" }[] {
  return behaviour["listen-ports"] ?? declared.map((p) => ({ port: p.containerPort, protocol: p.protocol === "UDP" ? "udp" : "tcp" }));
}

export class Kubelet {
  private readonly runtimes = new Map<string, PodRuntime>();
  private readonly ips = new IpPool();

  constructor(
    private readonly store: Store,
    private readonly options: KubeletOptions,
    private readonly events: EventRecorder,
    private readonly network: PodNetwork,
  ) {
    store.on(POD, (ev) => this.onPod(ev));
  }

  private event(rt: PodRuntime, type: "Normal" | "Warning", reason: string, message: string, r?: ContainerRecord, component = "kubelet"): void {
    const involved: Involved = { apiVersion: "v1", kind: "Pod", name: rt.name, namespace: rt.namespace, uid: rt.uid };
    if (r) involved.fieldPath = `spec.${r.init ? "initContainers" : "containers"}{${r.name}}`;
    this.events.record(involved, type, reason, message, component);
  }

  runtime(namespace: string, name: string): PodRuntime | undefined {
    const pod = this.store.get(POD, namespace, name);
    return pod ? this.runtimes.get(pod.metadata.uid!) : undefined;
  }

  async stop(): Promise<void> {
    await Promise.all([...this.runtimes.values()].map((rt) => rt.dispose()));
    this.runtimes.clear();
  }

  private onPod(ev: StoreEvent): void {
    const pod = ev.object;
    const uid = pod.metadata.uid!;
    if (ev.type === "ADDED") {
      const rt = new PodRuntime(pod.metadata.namespace!, pod.metadata.name, uid, pod);
      this.runtimes.set(uid, rt);
      this.run(rt).catch((err: unknown) => {
        if ((err as Error).name !== "AbortError") console.error("[sim] kubelet:", err);
      });
      return;
    }
    const rt = this.runtimes.get(uid);
    if (!rt) return;
    if (ev.type === "DELETED") {
      this.runtimes.delete(uid);
      this.events.forget(uid);
      void rt.dispose();
      return;
    }
    if (pod.metadata.deletionTimestamp && !rt.terminating) {
      rt.terminating = true;
      void this.terminate(rt, pod.metadata.deletionGracePeriodSeconds ?? 30);
    } else if (rt.terminating && (pod.metadata.deletionGracePeriodSeconds ?? 30) < (ev.old?.metadata.deletionGracePeriodSeconds ?? 30)) {
      // A second delete shortened the grace period: SIGKILL comes sooner.
      this.armKill(rt, pod.metadata.deletionGracePeriodSeconds ?? 30);
    }
    if (pod.spec?.activeDeadlineSeconds !== ev.old?.spec?.activeDeadlineSeconds) {
      rt.armDeadline(pod.spec?.activeDeadlineSeconds, () => void this.deadlineExceeded(rt));
    }
  }

  /** Writes the runtime's view into the pod's status (and binds it on first write). */
  private sync(rt: PodRuntime, bind = false): void {
    this.store.mutate(POD, rt.namespace, rt.name, (d) => {
      if (d.metadata.uid !== rt.uid) return false;
      if (bind) d.spec.nodeName = NODE_NAME;
      d.status = rt.status(d.status?.qosClass ?? "BestEffort");
      // The kubelet reports which generation of the spec its status describes.
      if (d.metadata.generation !== undefined) d.status.observedGeneration = d.metadata.generation;
    });
  }

  private pod(rt: PodRuntime): KubeObject | undefined {
    const p = this.store.get(POD, rt.namespace, rt.name);
    return p && p.metadata.uid === rt.uid ? p : undefined;
  }

  /** A pause that ends early (rejecting) when the pod goes away. */
  private delay(rt: PodRuntime, ms: number): Promise<void> {
    return sleep(Math.max(0, ms), undefined, { signal: rt.abort.signal });
  }

  private async run(rt: PodRuntime): Promise<void> {
    await this.delay(rt, 0);
    let pod = this.pod(rt);
    if (!pod) return;
    rt.ip = await this.allocateIp(pod);
    pod = this.pod(rt);
    if (!pod) return;
    rt.startTime = timestamp();
    this.sync(rt, true);
    this.event(rt, "Normal", "Scheduled", `Successfully assigned ${rt.namespace}/${rt.name} to ${NODE_NAME}`, undefined, "default-scheduler");
    rt.armDeadline(pod.spec?.activeDeadlineSeconds, () => void this.deadlineExceeded(rt));
    const restartPolicy: string = pod.spec?.restartPolicy ?? "Always";

    for (const r of rt.inits) {
      await this.pull(rt, pod, r);
      for (;;) {
        await this.delay(rt, this.startDelay(pod, r));
        const exit = await this.startContainer(rt, pod, r);
        if (rt.terminating || rt.pastDeadline || rt.phase !== "Pending") return;
        if (exit.exitCode === 0) break;
        if (restartPolicy === "Never") {
          rt.phase = "Failed";
          this.sync(rt);
          return;
        }
        await this.backOff(rt, r);
      }
      pod = this.pod(rt) ?? pod;
    }

    for (const r of rt.mains) r.state = { waiting: { reason: "ContainerCreating" } };
    if (rt.inits.length > 0) this.sync(rt);
    await Promise.all(rt.mains.map((r) => this.pull(rt, pod!, r)));
    await this.delay(rt, Math.max(0, ...rt.mains.map((r) => this.startDelay(pod!, r))));
    await Promise.all(rt.mains.map((r) => this.runMain(rt, pod!, r, restartPolicy)));
  }

  /** A pod IP whose ports are free (another cluster on this machine may be using an address). */
  private async allocateIp(pod: KubeObject): Promise<string> {
    const ports = new Set<number>();
    for (const c of pod.spec?.containers ?? []) {
      for (const p of c.ports ?? []) if ((p.protocol ?? "TCP") === "TCP") ports.add(p.containerPort);
      const inspect = inspectPort([...(c.command ?? []), ...(c.args ?? [])], envOf(c));
      if (inspect !== undefined) ports.add(inspect);
    }
    for (let attempt = 0; ; attempt++) {
      const ip = this.ips.next();
      if (ports.size === 0 || attempt >= 20 || (await portsFree(ip, [...ports]))) return ip;
    }
  }

  private startDelay(pod: KubeObject, r: ContainerRecord): number {
    return behaviourFor(pod, r.name)["start-delay-ms"] ?? this.options.podStartDelayMs;
  }

  /** Image pull: a failing pull alternates ErrImagePull and ImagePullBackOff until the pod goes. */
  private async pull(rt: PodRuntime, pod: KubeObject, r: ContainerRecord): Promise<void> {
    const mode = behaviourFor(pod, r.name)["image-pull"];
    const policy = r.spec.imagePullPolicy;
    if (mode === "never-cached" || (policy === "Never" && imageFailsToPull(r.image))) {
      const message = `Container image "${r.image}" is not present with pull policy of Never`;
      r.state = { waiting: { reason: "ErrImageNeverPull", message } };
      this.sync(rt);
      this.event(rt, "Warning", "ErrImageNeverPull", message, r);
      await new Promise<never>((_, reject) => rt.abort.signal.addEventListener("abort", () => reject(rt.abort.signal.reason)));
    }
    const fails = mode === "fail" || (mode === undefined && imageFailsToPull(r.image));
    if (!fails) {
      if (policy === "Always") {
        this.event(rt, "Normal", "Pulling", `Pulling image "${r.image}"`, r);
        this.event(rt, "Normal", "Pulled", `Successfully pulled image "${r.image}" in 0s (0s including waiting)`, r);
      } else this.event(rt, "Normal", "Pulled", `Container image "${r.image}" already present on machine`, r);
      return;
    }
    const ref = r.image.includes("/") ? r.image : `docker.io/library/${r.image}`;
    for (;;) {
      const message = `failed to pull and unpack image "${ref}": failed to resolve reference "${ref}": ${ref}: not found`;
      r.state = { waiting: { reason: "ErrImagePull", message } };
      this.sync(rt);
      this.event(rt, "Normal", "Pulling", `Pulling image "${r.image}"`, r);
      this.event(rt, "Warning", "Failed", `Failed to pull image "${r.image}": ${message}`, r);
      this.event(rt, "Warning", "Failed", "Error: ErrImagePull", r);
      await this.delay(rt, this.options.backoffMs);
      r.state = { waiting: { reason: "ImagePullBackOff", message: `Back-off pulling image "${r.image}"` } };
      this.sync(rt);
      this.event(rt, "Normal", "BackOff", `Back-off pulling image "${r.image}"`, r);
      this.event(rt, "Warning", "Failed", "Error: ImagePullBackOff", r);
      await this.delay(rt, this.options.backoffMs);
    }
  }

  private async backOff(rt: PodRuntime, r: ContainerRecord): Promise<void> {
    this.event(rt, "Warning", "BackOff", `Back-off restarting failed container ${r.name} in pod ${rt.name}_${rt.namespace}(${rt.uid})`, r);
    r.previous = r.process;
    r.lastState = r.state;
    r.restartCount++;
    r.state = { waiting: { reason: "CrashLoopBackOff", message: `back-off ${Math.round(this.options.backoffMs / 1000)}s restarting failed container=${r.name} pod=${rt.name}_${rt.namespace}(${rt.uid})` } };
    this.sync(rt);
    await this.delay(rt, this.options.backoffMs);
  }

  private async runMain(rt: PodRuntime, pod: KubeObject, r: ContainerRecord, restartPolicy: string): Promise<void> {
    for (;;) {
      const exit = await this.startContainer(rt, pod, r);
      if (rt.terminating || rt.pastDeadline || rt.phase === "Failed" || rt.phase === "Succeeded") return;
      const restart = restartPolicy === "Always" || (restartPolicy === "OnFailure" && exit.exitCode !== 0);
      if (!restart) {
        this.maybeFinish(rt);
        return;
      }
      await this.backOff(rt, r);
    }
  }

  /** All containers of a restartPolicy-Never pod have stopped: the pod reaches its terminal phase. */
  private maybeFinish(rt: PodRuntime): void {
    if (rt.mains.some((r) => !("terminated" in r.state))) {
      this.sync(rt);
      return;
    }
    rt.phase = rt.mains.every((r) => "terminated" in r.state && r.state.terminated.exitCode === 0) ? "Succeeded" : "Failed";
    this.sync(rt);
  }

  /** Starts one container with its servers; resolves with its exit once it ends. */
  /**
   * The container's env once it resolves: until then it waits in CreateContainerConfigError and
   * the kubelet tries again after a back-off, as a real one does for a Secret not there yet.
   */
  private async containerEnv(rt: PodRuntime, r: ContainerRecord): Promise<Record<string, string>> {
    for (;;) {
      const resolved = resolveEnv(this.store, rt.namespace, r.spec);
      if ("env" in resolved) return resolved.env;
      r.state = { waiting: { reason: "CreateContainerConfigError", message: resolved.problem } };
      this.sync(rt);
      this.event(rt, "Warning", "Failed", `Error: ${resolved.problem}`, r);
      await this.delay(rt, this.options.backoffMs);
    }
  }

  private async startContainer(rt: PodRuntime, pod: KubeObject, r: ContainerRecord): Promise<ExitStatus> {
    const behaviour = behaviourFor(pod, r.name);
    const env = await this.containerEnv(rt, r);
    const argv: string[] = [...(r.spec.command ?? []), ...(r.spec.args ?? [])].map((a: string) => expandEnvReferences(a, env));
    const served = await this.startServers(rt, r, argv, env, behaviour);
    const proc: ContainerProcess = new ContainerProcess(
      {
        name: r.name,
        tty: r.spec.tty === true,
        stdin: r.spec.stdin === true,
        stdinOnce: r.spec.stdinOnce === true,
        server: served.server,
        argv,
        image: r.image,
        env,
        fs: containerFs(rt, pod, r.spec),
        download: this.network.downloads(rt.namespace, rt.name),
        logLimitBytes: this.options.logLimitBytes,
        // The shell exec'd the kernel (a warm pool pod once claimed): it serves what a kernel
        // started directly would, and behaves as the pod's annotations say now.
        exec: async (next, nextEnv) => {
          const now = this.pod(rt) ?? pod;
          const nextBehaviour = behaviourFor(now, r.name);
          const started = await this.startServers(rt, r, next, nextEnv, nextBehaviour);
          if (started.problem) proc.print("stderr", Buffer.from(started.problem));
          this.driveDebug(rt, now, r, proc, next, nextEnv);
          return { behaviour: nextBehaviour, server: started.server };
        },
      },
      behaviour,
    );
    if (served.problem) proc.print("stderr", Buffer.from(served.problem));
    if (rt.abort.signal.aborted) {
      await stopServers(r);
      throw rt.abort.signal.reason;
    }
    r.process = proc;
    r.containerID = containerId();
    const startedAt = timestamp();
    r.state = { running: { startedAt } };
    r.ready = !r.init;
    if (!r.init && rt.mains.every((m) => "running" in m.state)) rt.phase = "Running";
    this.sync(rt);
    this.event(rt, "Normal", "Created", `Created container: ${r.name}`, r);
    this.event(rt, "Normal", "Started", `Started container ${r.name}`, r);
    const exited = new Promise<ExitStatus>((resolve) => proc.once("exit", resolve));
    proc.start();
    this.driveDebug(rt, pod, r, proc, argv, env);
    const exit = await exited;
    await stopServers(r);
    r.ready = false;
    const terminated: { exitCode: number; reason: string; message?: string; startedAt: string; finishedAt: string; containerID: string } = {
      exitCode: exit.exitCode,
      reason: exit.reason,
      startedAt,
      finishedAt: timestamp(),
      containerID: r.containerID,
    };
    const message = terminationMessage(r.spec, behaviour, proc, exit);
    if (message) terminated.message = message;
    r.state = { terminated };
    if (r.init) this.sync(rt);
    return exit;
  }

  /**
   * What a main container's program serves beside it: the workspace surface, the kernel's
   * inspect stream, listeners on its ports. True when any makes it long-running. A program
   * listens where its application says (`listen-ports`), by default on its container's declared
   * ports; as on a real node, a containerPort opens nothing by itself and is not needed to
   * listen (a warm pool pod declares none and serves the ports of the kernel it exec's).
   */
  private async startServers(rt: PodRuntime, r: ContainerRecord, argv: string[], env: Record<string, string>, behaviour: ContainerBehaviour): Promise<{ server: boolean; problem?: string }> {
    if (r.init) return { server: false };
    const debugPort = behaviour["kernel-debug"] === "off" ? undefined : inspectPort(argv, env);
    const ports: { containerPort: number; protocol?: string }[] = r.spec.ports ?? [];
    const servesWorkspace = behaviour.workspace ?? (r.name === "workspace" && ports.some((p) => p.containerPort === WORKSPACE_PORT));
    const workspacePort = ports.some((p) => p.containerPort === WORKSPACE_PORT) ? WORKSPACE_PORT : (ports[0]?.containerPort ?? WORKSPACE_PORT);
    const listening = listeningPorts(behaviour, ports);
    const listens = behaviour.listen !== false && listening.length > 0;
    const who = `${rt.name}/${r.name}`;
    const ip = rt.ip!;
    const server = listens || debugPort !== undefined || servesWorkspace;
    try {
      if (servesWorkspace) r.servers.push(await serveWorkspace(rt.workspace, ip, workspacePort));
      if (debugPort !== undefined) {
        r.debug = new KernelDebugStream();
        await r.debug.listen(ip, debugPort);
      }
      if (listens) {
        const taken = new Set([debugPort, servesWorkspace ? workspacePort : undefined]);
        for (const p of listening) {
          if (taken.has(p.port)) continue;
          r.servers.push(await listenContainerPort(ip, p.port, p.protocol === "udp" ? "UDP" : "TCP", who));
        }
      }
    } catch (err) {
      return { server, problem: `[sim] could not listen: ${(err as Error).message}\n` };
    }
    return { server };
  }

  /** The kernel's lifecycle frames on its inspect stream, once its process runs. */
  private driveDebug(rt: PodRuntime, pod: KubeObject, r: ContainerRecord, proc: ContainerProcess, argv: string[], env: Record<string, string>): void {
    if (!r.debug) return;
    driveKernel(r.debug, rt.workspace, proc, argv, env, () => {
      // Annotations are read at every boot: a test may change them before touching the entry.
      const now = behaviourFor(this.pod(rt) ?? pod, r.name);
      return {
        ports: now["kernel-ports"] ?? listeningPorts(now, r.spec.ports ?? []),
        runFails: now["kernel-debug"] === "run-failed",
        version: kernelVersionOf(r.image),
      };
    });
  }

  /**
   * Past activeDeadlineSeconds, as a real kubelet: SIGTERM to every container (SIGKILL after the
   * pod's grace period), each ending with its own exit (143 for one SIGTERM ended, reason
   * Error), and once they have stopped the pod Failed with reason DeadlineExceeded.
   */
  private async deadlineExceeded(rt: PodRuntime): Promise<void> {
    if (rt.phase === "Succeeded" || rt.phase === "Failed" || rt.terminating || rt.pastDeadline) return;
    rt.pastDeadline = true;
    const message = "Pod was active on the node longer than the specified deadline";
    this.event(rt, "Normal", "DeadlineExceeded", message);
    const running = rt.records.filter((r) => r.process?.running);
    const stopped = Promise.all(running.map((r) => new Promise<void>((resolve) => r.process!.once("exit", () => resolve()))));
    for (const r of running) {
      this.event(rt, "Normal", "Killing", `Stopping container ${r.name}`, r);
      r.process!.signal("SIGTERM");
    }
    // Pulls, back-offs and container starts still pending are abandoned.
    rt.abort.abort();
    this.armKill(rt, this.pod(rt)?.spec?.terminationGracePeriodSeconds ?? 30);
    await stopped;
    for (const r of rt.records) {
      if (!r.process || !("running" in r.state)) continue;
      const exit = r.process.exitStatus ?? { exitCode: 137, reason: "Error" };
      r.state = { terminated: { exitCode: exit.exitCode, reason: exit.reason, startedAt: r.state.running.startedAt, finishedAt: timestamp(), containerID: r.containerID! } };
      r.ready = false;
    }
    if (rt.phase === "Succeeded" || rt.phase === "Failed") return;
    rt.phase = "Failed";
    rt.reason = "DeadlineExceeded";
    rt.message = message;
    this.sync(rt);
  }

  /** Graceful deletion: SIGTERM, SIGKILL after the grace period, terminal status, then removal. */
  private async terminate(rt: PodRuntime, graceSeconds: number): Promise<void> {
    const running = rt.records.filter((r) => r.process?.running);
    for (const r of running) this.event(rt, "Normal", "Killing", `Stopping container ${r.name}`, r);
    const stopped = Promise.all(running.map((r) => new Promise<void>((resolve) => r.process!.once("exit", () => resolve()))));
    for (const r of running) r.process!.signal("SIGTERM");
    this.armKill(rt, graceSeconds);
    await stopped;
    clearTimeout(rt.killTimer);
    rt.abort.abort();
    await new Promise((resolve) => setImmediate(resolve));
    for (const r of rt.records) {
      if (r.process && "running" in r.state) {
        const exit = r.process.exitStatus ?? { exitCode: 137, reason: "Error" };
        r.state = { terminated: { exitCode: exit.exitCode, reason: exit.reason, finishedAt: timestamp(), containerID: r.containerID! } };
        r.ready = false;
      }
    }
    if (running.length > 0 && rt.phase !== "Failed" && rt.phase !== "Succeeded") {
      rt.phase = rt.mains.every((r) => "terminated" in r.state && r.state.terminated.exitCode === 0) ? "Succeeded" : "Failed";
      this.sync(rt);
    }
    const pod = this.pod(rt);
    if (!pod) return;
    if ((pod.metadata.finalizers ?? []).length > 0) {
      this.store.mutate(POD, rt.namespace, rt.name, (d) => {
        d.metadata.deletionGracePeriodSeconds = 0;
      });
      return;
    }
    this.store.remove(POD, rt.namespace, rt.name);
  }

  /** SIGKILL to every container still running once `graceSeconds` from now have passed, unless due sooner already. */
  private armKill(rt: PodRuntime, graceSeconds: number): void {
    const at = Date.now() + graceSeconds * 1000;
    if (rt.killAt !== undefined && rt.killAt <= at) return;
    clearTimeout(rt.killTimer);
    rt.killAt = at;
    rt.killTimer = setTimeout(() => {
      for (const r of rt.records) if (r.process?.running) r.process.signal("SIGKILL");
    }, graceSeconds * 1000);
  }

  /** Fault: the container (or every running container) exits now with `exitCode`. */
  exitNow(namespace: string, name: string, exitCode: number, container?: string): boolean {
    const rt = this.runtime(namespace, name);
    if (!rt) return false;
    let any = false;
    for (const r of rt.records) {
      if (container !== undefined && r.name !== container) continue;
      if (r.process?.running) {
        r.process.exit({ exitCode, reason: exitCode === 0 ? "Completed" : "Error" });
        any = true;
      }
    }
    return any;
  }
}
