/**
 * A watch session driven in-process against the simulated cluster, so the backend's reports
 * can be read as the core receives them: an app container's end is reported once per container
 * per pod (docs/kubernetes.md "Watch pods"), a pod that reaches its deadline fails the session, app-set changes queue,
 * suspend is quiet, a kernel's declared ports are accepted, rejected or dropped (docs/kubernetes.md "Services and routes"), and
 * concurrent starts share one ConfigMap (docs/kubernetes.md "ConfigMaps").
 */
import { createServer } from "node:http";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { loadKubeConfig } from "../../../src/config/kube.ts";
import type { ResolvedApp } from "../../../src/contract/wire.ts";
import { createLogger } from "../../../src/log.ts";
import type { BackendCallbacks, BackendEvent, Started, StartSpec, Workload } from "../../../src/sessions/backend-seam.ts";
import { type SimulatedCluster, startSimulatedCluster } from "../../../src/sim/index.ts";
import { kubeApi } from "../../../src/kube/cluster/api.ts";
import { BundleStore } from "../../../src/kube/bundle/bundle-store.ts";
import { DEFAULT_KUBE_TIMINGS, type KubeContext } from "../../../src/kube/context.ts";
import { PodWatcher } from "../../../src/kube/cluster/pod-watcher.ts";
import { simulatedBehaviourAnnotations } from "../../../src/local-cluster/simulated-behaviour.ts";
import { ownedObjects } from "../../../src/kube/specs/names.ts";
import { WatchSession } from "../../../src/kube/session/watch-session.ts";
import { ensureWorkspaceConfigMap } from "../../../src/kube/session/ensure-workspace-configmap.ts";
import { waitFor } from "../../support/wait.ts";
import { SoleOwnership } from "../../../src/sessions/sole-ownership.ts";

const NAMESPACE = "telo-sessions";

const APPS: ResolvedApp[] = [
  { name: "web", entryRelativePath: "web/telo.yaml", ports: [], io: "tty" },
  { name: "worker", entryRelativePath: "worker/telo.yaml", ports: [], io: "streams" },
];

/** Every report the backend makes, in order, as the core would receive it. */
class Reports {
  readonly calls: Array<[string, ...unknown[]]> = [];
  readonly stop = new AbortController();

  callbacks(): BackendCallbacks {
    return {
      emit: (event) => this.#record(event),
      isUserStopped: () => this.stop.signal.aborted,
      stopRequested: this.stop.signal,
    };
  }

  /** A settled start: its `running` is the first status the core would report. */
  async started(start: Promise<Started>): Promise<Workload> {
    const { workload, running } = await start;
    if (running) this.calls.push(["status", running]);
    return workload;
  }

  #record(event: BackendEvent): void {
    if (event.type === "status") this.calls.push(["status", event.status]);
    else if (event.type === "runEnded") this.calls.push(["runEnded", event.app, event.outcome]);
    else if (event.type === "reachability") this.calls.push(["reachability", event.app, event.port, event.state]);
    else if (event.type === "endpoints") {
      const { type, app, ...change } = event;
      this.calls.push([type, app, change]);
    } else if (event.type === "progress") this.calls.push(["progress", event]);
  }

  of(name: string): unknown[][] {
    return this.calls.filter(([call]) => call === name).map(([, ...args]) => args);
  }
}

function spec(sessionId: string, simulate: Record<string, string | number>): StartSpec {
  return {
    sessionId,
    createdAt: new Date().toISOString(),
    mode: "watch",
    apps: APPS,
    env: {},
    config: { image: "telorun/node:latest-slim", pullPolicy: "missing", simulate },
    bundle: {
      entryRelativePath: "web/telo.yaml",
      files: APPS.map((app) => ({ relativePath: app.entryRelativePath, contents: "kind: Telo.Application\n" })),
    },
    inspect: true,
    selfContained: false,
  };
}

describe("watch session pod watch", () => {
  let sim: SimulatedCluster;
  let ctx: KubeContext;
  const workloads: Workload[] = [];

  beforeAll(async () => {
    sim = await startSimulatedCluster({ podStartDelayMs: 20, backoffMs: 200, events: false });
    const api = kubeApi(sim.kubeConfig());
    await api.core.createNamespace({ body: { metadata: { name: NAMESPACE } } });
    const config = loadKubeConfig({ RUNNER_SELF_URL: "http://127.0.0.1:1" });
    const log = createLogger("test", "silent");
    const watcher = new PodWatcher(api, { namespace: NAMESPACE, ...ownedObjects(config.sessionPods) }, log);
    watcher.start();
    await watcher.ready;
    ctx = {
      api,
      config,
      watcher,
      bundles: new BundleStore(config.selfUrl!),
      router: undefined,
      builder: undefined,
      log,
      timings: DEFAULT_KUBE_TIMINGS,
      extraPodAnnotations: simulatedBehaviourAnnotations,
      ownership: new SoleOwnership(),
    };
  });
  afterAll(async () => {
    await Promise.allSettled(workloads.map((workload) => workload.stop()));
    ctx?.watcher.stop();
    await sim?.stop();
  });

  it("reports an app container's end once for that pod, and the session stays up", async () => {
    const reports = new Reports();
    const session = new WatchSession(ctx, spec("aaaaaaaaaaaa", { "exit-code.app-worker": 3, "run-ms.app-worker": 300 }), reports.callbacks(), { ttlSeconds: 600 });
    const workload = await reports.started(session.start());
    workloads.push(workload);
    await waitFor("the worker's end to be reported", () => reports.of("runEnded").length > 0 || undefined);
    // Later pod events (the web app's reload) must not report the same end again.
    await workload.reload?.("web");
    await workload.workspace?.apply({ write: [{ path: "more.txt", content: "x" }] });
    await waitFor("the write", async () => (await workload.workspace?.tree())?.files.some((file) => file.path === "more.txt") || undefined);
    expect(reports.of("runEnded")).toEqual([["worker", { reason: "application container Error (exit code 3)" }]]);
    // The workspace app's 500 `{error}` becomes the error's message, for the core to pass on.
    await expect(workload.workspace?.file("missing.txt")).rejects.toThrow(/ENOENT/);
    expect(reports.of("status")).toEqual([[{ kind: "running", endpoints: [] }]]);
    await workload.stop();
    expect(reports.of("status").at(-1)).toEqual([{ kind: "stopped" }]);
  });

  it("fails the session when its pod reaches its deadline, reporting every app's end", async () => {
    const reports = new Reports();
    // Pod timestamps have whole seconds, so the deadline falls between 2 and 3 s after the start.
    const workload = await reports.started(new WatchSession(ctx, spec("bbbbbbbbbbbb", {}), reports.callbacks(), { ttlSeconds: 3 }).start());
    workloads.push(workload);
    await workload.done;
    // Named as a run session names it: the kubelet's account of the deadline, not the phase.
    expect(reports.of("status").at(-1)).toEqual([{ kind: "failed", message: "Pod was active on the node longer than the specified deadline" }]);
    expect(reports.of("runEnded")).toEqual([
      ["web", { reason: "application container DeadlineExceeded (exit code 143)" }],
      ["worker", { reason: "application container DeadlineExceeded (exit code 143)" }],
    ]);
    // The ended pod is deleted with the session.
    await waitFor("the pod to go", () => ctx.watcher.pods().every((pod) => !pod.metadata?.name?.startsWith("telo-watch-bbbbbbbbbbbb-")) || undefined);
  });

  it("runs concurrent app-set changes one after the other, ending on the last set in one pod", async () => {
    const reports = new Reports();
    const workload = await reports.started(new WatchSession(ctx, spec("cccccccccccc", {}), reports.callbacks(), { ttlSeconds: 600 }).start());
    workloads.push(workload);
    const only = (name: string): ResolvedApp[] => [{ name, entryRelativePath: "web/telo.yaml", ports: [], io: "tty" }];
    await Promise.all([workload.setApps?.(only("first")), workload.setApps?.(only("second"))]);
    const pods = ctx.watcher.pods().filter((pod) => pod.metadata?.name?.startsWith("telo-watch-cccccccccccc-") && !pod.metadata.deletionTimestamp);
    await waitFor(
      "the replaced pods to go",
      () => ctx.watcher.pods().filter((pod) => pod.metadata?.name?.startsWith("telo-watch-cccccccccccc-")).length === 1 || undefined,
    );
    expect(pods.at(-1)?.spec?.containers?.map((container) => container.name)).toEqual(["workspace", "app-second"]);
    expect(reports.of("status").map(([status]) => (status as { kind: string }).kind)).toEqual(["running", "running", "running"]);
    expect((await workload.workspace?.tree())?.files.map((file) => file.path)).toEqual(["telo-workspace.yaml", "web/telo.yaml", "worker/telo.yaml"]);
  });

  it("ends the session and says why when an app-set change cannot delete the old pod", async () => {
    const reports = new Reports();
    const workload = await reports.started(new WatchSession(ctx, spec("ffffffffffff", {}), reports.callbacks(), { ttlSeconds: 600 }).start());
    workloads.push(workload);
    sim.faults.failNext({ verb: "delete", resource: "pods", code: 403, message: "pods is forbidden" });
    const change = workload.setApps?.([{ name: "next", entryRelativePath: "web/telo.yaml", ports: [], io: "tty" }]);
    await expect(change).rejects.toThrow(/forbidden|403/);
    // Ended, not left half-way: the caller reports the failure; nothing waits on this workload.
    await workload.done;
    expect(workload.workspace).toBeUndefined();
    const pods = ctx.watcher.pods().filter((pod) => pod.metadata?.name?.startsWith("telo-watch-ffffffffffff-"));
    expect(pods.map((pod) => pod.spec?.containers?.map((container) => container.name))).toEqual([["workspace", "app-web", "app-worker"]]);
    await ctx.api.core.deleteNamespacedPod({ name: pods[0]!.metadata!.name!, namespace: NAMESPACE, gracePeriodSeconds: 0 });
  });

  it("suspends quietly: the pod goes, no status is reported, and the workload is done", async () => {
    const reports = new Reports();
    const workload = await reports.started(new WatchSession(ctx, spec("dddddddddddd", {}), reports.callbacks(), { ttlSeconds: 600 }).start());
    await workload.suspend?.();
    await workload.done;
    expect(workload.workspace).toBeUndefined();
    expect(reports.of("status")).toEqual([[{ kind: "running", endpoints: [] }]]);
    expect(reports.of("runEnded")).toEqual([]);
    await waitFor("the pod to go", () => ctx.watcher.pods().every((pod) => !pod.metadata?.name?.startsWith("telo-watch-dddddddddddd-")) || undefined);
  });

  it("accepts, rejects and drops ports a reloaded kernel declares, and watches the new ones", async () => {
    const reports = new Reports();
    const helper = { name: "helper", image: "acme/agent:1", env: {}, pullPolicy: "missing" as const, port: 7000 };
    const session = spec("eeeeeeeeeeee", { "kernel-debug.app-web": "off" });
    const withPort: StartSpec = { ...session, apps: [{ ...APPS[0]!, ports: [{ port: 3000, protocol: "tcp" }] }, APPS[1]!], agent: helper };
    const workload = await reports.started(new WatchSession(ctx, withPort, reports.callbacks(), { ttlSeconds: 600 }).start());
    workloads.push(workload);
    const podIp = ctx.watcher.pods().find((pod) => pod.metadata?.name?.startsWith("telo-watch-eeeeeeeeeeee-"))?.status?.podIP;
    // web's kernel inspector is switched off in the simulator; this one stands in at its address
    // (9230, app index 0), where the session's relay keeps knocking.
    const inspector = await kernelInspector(podIp!, 9230, [
      { event: "Kernel.PortsResolved", payload: { ports: [{ port: 3000 }, { port: 3001 }, { port: 7000 }] } },
      { event: "Kernel.PortsResolved", payload: { ports: [{ port: 3001 }] } },
    ]);
    try {
      await waitFor("both port changes to be reported", () => reports.of("endpoints").length === 2 || undefined);
    } finally {
      await inspector.close();
    }
    expect(reports.of("endpoints")).toEqual([
      [
        "web",
        {
          added: [{ host: "", port: 3001, protocol: "tcp" }],
          rejected: [{ port: 7000, reason: "this session's co-resident agent 'helper' listens on tcp port 7000" }],
        },
      ],
      ["web", { removed: [{ host: "", port: 3000, protocol: "tcp" }] }],
    ]);
    expect(reports.of("reachability")).toContainEqual(["web", 3001, "checking"]);
    expect(reports.of("status")).toEqual([
      [{ kind: "running", endpoints: [{ host: "", port: 3000, protocol: "tcp" }], agent: { host: "", port: 7000, protocol: "tcp" } }],
    ]);
  });

  it("ensures one workspace-app ConfigMap however many sessions start at once", async () => {
    await Promise.all(Array.from({ length: 5 }, () => ensureWorkspaceConfigMap(ctx)));
    const names = (await ctx.api.core.listNamespacedConfigMap({ namespace: NAMESPACE })).items.map((item) => item.metadata?.name);
    expect(names.filter((name) => name?.startsWith("telo-workspace-app-"))).toHaveLength(1);
  });
});

/** A kernel inspector's event stream (`GET /events`) that sends `frames` to every client. */
async function kernelInspector(host: string, port: number, frames: Array<{ event: string; payload: unknown }>): Promise<{ close(): Promise<void> }> {
  const server = createServer((request, response) => {
    if (request.url !== "/events") {
      response.writeHead(404).end();
      return;
    }
    response.writeHead(200, { "content-type": "text/event-stream" });
    frames.forEach((frame, index) => response.write(`id: ${index + 1}\ndata: ${JSON.stringify({ kind: "event", ...frame })}\n\n`));
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(port, host, resolve);
  });
  return {
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
