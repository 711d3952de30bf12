// One pod as the kubelet tracks it: its containers' states and processes, its emptyDir volumes,
// its IP, and the pod status rendered from all that (phase, conditions, container statuses).
import { createHash, randomBytes } from "node:crypto";
import type { ContainerProcess } from "./container.ts";
import type { KernelDebugStream } from "./kernel-debug.ts";
import type { Closable } from "./listeners.ts";
import { HOST_IP } from "./node.ts";
import { type KubeObject, timestamp } from "./object.ts";
import { WorkspaceTree } from "./workspace.ts";

export type State =
  | { waiting: { reason: string; message?: string } }
  | { running: { startedAt: string } }
  | { terminated: { exitCode: number; reason: string; message?: string; startedAt?: string; finishedAt: string; containerID?: string } };

export interface ContainerRecord {
  name: string;
  image: string;
  init: boolean;
  spec: KubeObject["spec"];
  state: State;
  lastState: State | Record<string, never>;
  ready: boolean;
  restartCount: number;
  containerID?: string;
  process?: ContainerProcess;
  /** The instance before the last restart, for `logs --previous`. */
  previous?: ContainerProcess;
  servers: Closable[];
  debug?: KernelDebugStream;
}

export function containerId(): string {
  return `containerd://${randomBytes(32).toString("hex")}`;
}

function imageId(image: string): string {
  const name = image.split("@")[0]!.replace(/:[^/:]+$/, "");
  const qualified = name.includes("/") ? (name.split("/")[0]!.includes(".") ? name : `docker.io/${name}`) : `docker.io/library/${name}`;
  return `${qualified}@sha256:${createHash("sha256").update(image).digest("hex")}`;
}

export class PodRuntime {
  readonly records: ContainerRecord[];
  private readonly volumes = new Map<string, WorkspaceTree>();
  readonly abort = new AbortController();
  ip?: string;
  startTime?: string;
  phase = "Pending";
  reason?: string;
  message?: string;
  terminating = false;
  /** activeDeadlineSeconds passed: the kubelet is ending the containers and then the pod. */
  pastDeadline = false;
  /** When a graceful deletion's SIGKILL is due, and its timer. */
  killAt?: number;
  killTimer?: NodeJS.Timeout;
  private deadlineTimer?: NodeJS.Timeout;
  private conditionTimes = new Map<string, { status: string; time: string }>();

  constructor(
    readonly namespace: string,
    readonly name: string,
    readonly uid: string,
    pod: KubeObject,
  ) {
    const spec = pod.spec ?? {};
    const record = (c: KubeObject["spec"], init: boolean): ContainerRecord => ({
      name: c.name,
      image: c.image,
      init,
      spec: c,
      state: { waiting: { reason: init || (spec.initContainers ?? []).length > 0 ? "PodInitializing" : "ContainerCreating" } },
      lastState: {},
      ready: false,
      restartCount: 0,
      servers: [],
    });
    this.records = [...(spec.initContainers ?? []).map((c: KubeObject["spec"]) => record(c, true)), ...(spec.containers ?? []).map((c: KubeObject["spec"]) => record(c, false))];
  }

  /** The in-memory tree of one emptyDir volume, shared by every container mounting it. */
  volume(name: string): WorkspaceTree {
    let tree = this.volumes.get(name);
    if (!tree) this.volumes.set(name, (tree = new WorkspaceTree()));
    return tree;
  }

  /**
   * The tree the workspace surface serves and kernels boot from: the `workspace` volume, which
   * a watch pod mounts at /workspace in every container.
   */
  get workspace(): WorkspaceTree {
    return this.volume("workspace");
  }

  container(name: string): ContainerRecord | undefined {
    return this.records.find((r) => r.name === name);
  }

  get inits(): ContainerRecord[] {
    return this.records.filter((r) => r.init);
  }

  get mains(): ContainerRecord[] {
    return this.records.filter((r) => !r.init);
  }

  private condition(type: string, ok: boolean, reason?: string, message?: string) {
    const status = ok ? "True" : "False";
    let t = this.conditionTimes.get(type);
    if (!t || t.status !== status) {
      t = { status, time: timestamp() };
      this.conditionTimes.set(type, t);
    }
    const c: Record<string, unknown> = { type, status, lastProbeTime: null, lastTransitionTime: t.time };
    if (!ok && reason) c.reason = reason;
    if (!ok && message) c.message = message;
    return c;
  }

  /** The full pod status as the kubelet would report it now. */
  status(qosClass: string): Record<string, unknown> {
    const terminal = this.phase === "Succeeded" || this.phase === "Failed";
    const incompleteInits = this.inits.filter((r) => !("terminated" in r.state && r.state.terminated.exitCode === 0)).map((r) => r.name);
    const unready = this.mains.filter((r) => !r.ready).map((r) => r.name);
    const readyReason = terminal ? "PodCompleted" : "ContainersNotReady";
    const readyMessage = terminal ? undefined : `containers with unready status: [${unready.join(" ")}]`;
    const conditions = [
      this.condition("PodReadyToStartContainers", this.ip !== undefined && !terminal),
      this.condition("Initialized", incompleteInits.length === 0 || this.phase === "Succeeded", "ContainersNotInitialized", `containers with incomplete status: [${incompleteInits.join(" ")}]`),
      this.condition("Ready", unready.length === 0, readyReason, readyMessage),
      this.condition("ContainersReady", unready.length === 0, readyReason, readyMessage),
      this.condition("PodScheduled", true),
    ];
    const statusOf = (r: ContainerRecord) => {
      const s: Record<string, unknown> = {
        name: r.name,
        state: r.state,
        lastState: r.lastState,
        ready: r.ready,
        restartCount: r.restartCount,
        image: r.image,
        imageID: r.containerID ? imageId(r.image) : "",
        started: "running" in r.state,
      };
      if (r.containerID) s.containerID = r.containerID;
      return s;
    };
    const status: Record<string, unknown> = {
      phase: this.phase,
      conditions,
      hostIP: HOST_IP,
      hostIPs: [{ ip: HOST_IP }],
      qosClass,
    };
    if (this.ip) {
      status.podIP = this.ip;
      status.podIPs = [{ ip: this.ip }];
    }
    if (this.startTime) status.startTime = this.startTime;
    if (this.inits.length > 0) status.initContainerStatuses = this.inits.map(statusOf);
    status.containerStatuses = this.mains.map(statusOf);
    if (this.reason) status.reason = this.reason;
    if (this.message) status.message = this.message;
    return status;
  }

  armDeadline(seconds: number | undefined, onExpiry: () => void): void {
    clearTimeout(this.deadlineTimer);
    if (!seconds || !this.startTime) return;
    const due = Date.parse(this.startTime) + seconds * 1000;
    this.deadlineTimer = setTimeout(onExpiry, Math.max(0, due - Date.now()));
  }

  async dispose(): Promise<void> {
    this.abort.abort();
    clearTimeout(this.deadlineTimer);
    clearTimeout(this.killTimer);
    for (const r of this.records) {
      r.process?.exit({ exitCode: 137, reason: "Error" });
      await stopServers(r);
    }
  }
}

export async function stopServers(r: ContainerRecord): Promise<void> {
  const servers = r.servers;
  r.servers = [];
  const debug = r.debug;
  r.debug = undefined;
  await Promise.all([...servers.map((s) => s.close().catch(() => {})), debug?.close().catch(() => {})]);
}
