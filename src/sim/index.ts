// The embedded simulated Kubernetes cluster: an API server that @kubernetes/client-node and
// kubectl talk to unchanged, with a simulated kubelet, job controller, garbage collector, quota
// and routing controllers, fault injection and request counters. See docs/simulated-cluster.md.
import type { AddressInfo } from "node:net";
import { rm } from "node:fs/promises";
import { dirname } from "node:path";
import { KubeConfig } from "@kubernetes/client-node";
import { ResourceApi } from "./api.ts";
import { AttachServer, type StdinWrite } from "./attach.ts";
import { RequestCounters, type RecordedRequest } from "./counters.ts";
import { type AuditedWrite, WriteAudit } from "./audit.ts";
import { Faults } from "./fault-api.ts";
import { PodNetwork } from "./download.ts";
import { RequestFaults } from "./faults.ts";
import { EventRecorder } from "./events.ts";
import { GarbageCollector } from "./gc.ts";
import { JobController } from "./jobs.ts";
import { Kubelet } from "./kubelet.ts";
import { nodeObject } from "./node.ts";
import { writeKubeconfig } from "./kubeconfig.ts";
import { newUid, timestamp } from "./object.ts";
import { startQuotaController } from "./quota-controller.ts";
import { lookupType, RESOURCE_TYPES } from "./resources.ts";
import { RoutingController } from "./routing.ts";
import { createSimServer } from "./server.ts";
import { Store } from "./store.ts";
import { APISERVER_WATCH_CACHE, type WatchCacheSizing } from "./watch.ts";
import { applyCreateDefaults } from "./defaults.ts";

export type { FailRule, LatencyRule } from "./faults.ts";
export type { LostDownloadRule } from "./download.ts";
export type { RecordedRequest } from "./counters.ts";
export type { AuditedWrite } from "./audit.ts";
export type { StdinWrite } from "./attach.ts";
export { Faults } from "./fault-api.ts";
export { ANNOTATION_PREFIX } from "./behaviour.ts";

export interface SimulatedClusterOptions {
  /** Port of the API server; 0 (default) picks a free one. */
  port?: number;
  host?: string;
  /** Where to write the kubeconfig; default a fresh temp directory (removed on stop). */
  kubeconfigPath?: string;
  /** Time each container spends in ContainerCreating; 0 = instant (benchmarks). Default 100. */
  podStartDelayMs?: number;
  /** Image-pull and crash back-off interval. Default 1000. */
  backoffMs?: number;
  /** Interval of watch bookmarks (the apiserver sends about one a minute). Default 60000. */
  bookmarkIntervalMs?: number;
  /**
   * History kept per resource type for watch resumption, sized as kube-apiserver's watch cache
   * (default 100 to 102400 events, doubling while all are younger than 75 s); older versions get
   * an in-stream 410.
   */
  watchCache?: Partial<Omit<WatchCacheSizing, "now">>;
  /** The clock that ages watch-cache events (Date.now by default): tests move it forward. */
  now?: () => number;
  /** Longest watch when the client gives no timeoutSeconds (randomised 50–100% of it). Default 1800. */
  maxWatchSeconds?: number;
  /** Record kubelet and controller Events (Scheduled, Pulled, Started, Killing…). Default true. */
  events?: boolean;
  /** Namespaces that exist from the start, besides default/kube-system/kube-public/kube-node-lease. */
  namespaces?: string[];
}

export interface SimulatedCluster {
  url: string;
  kubeconfigPath: string;
  kubeConfig(): KubeConfig;
  faults: Faults;
  counters(): { requests: Record<string, number>; openWatches: number; attachSessions: number; lostDownloads: number };
  resetCounters(): void;
  recordedRequests(): RecordedRequest[];
  /** Every write answered, with its object, client User-Agent and status code (audit.ts). */
  audit(): AuditedWrite[];
  /** Every stdin message a container got over an attach, with the attaching client's User-Agent (attach.ts). */
  stdinWrites(): StdinWrite[];
  stop(): Promise<void>;
}

const NAMESPACE = lookupType("", "v1", "namespaces")!;

export async function startSimulatedCluster(options: SimulatedClusterOptions = {}): Promise<SimulatedCluster> {
  const store = new Store({ ...APISERVER_WATCH_CACHE, ...options.watchCache, now: options.now ?? Date.now });
  const events = new EventRecorder(store, options.events ?? true);
  const network = new PodNetwork();
  const kubelet = new Kubelet(
    store,
    {
      podStartDelayMs: options.podStartDelayMs ?? 100,
      backoffMs: options.backoffMs ?? 1000,
      logLimitBytes: 2 * 1024 * 1024,
    },
    events,
    network,
  );
  const gc = new GarbageCollector(store, 50);
  const jobs = new JobController(store, events);
  const routing = new RoutingController(store);
  const stopQuota = startQuotaController(store);
  const attach = new AttachServer(kubelet);
  const counters = new RequestCounters();
  const audit = new WriteAudit();
  const requestFaults = new RequestFaults();
  const faults = new Faults(requestFaults, store, kubelet, attach, network);
  const api = new ResourceApi(store, { maxWatchSeconds: options.maxWatchSeconds ?? 1800 });

  for (const name of ["default", "kube-system", "kube-public", "kube-node-lease", ...(options.namespaces ?? [])]) {
    if (store.get(NAMESPACE, undefined, name)) continue;
    const ns = { apiVersion: "v1", kind: "Namespace", metadata: { name, uid: newUid(), creationTimestamp: timestamp() } };
    applyCreateDefaults(ns);
    store.write(NAMESPACE, ns, "ADDED");
  }

  store.write(lookupType("", "v1", "nodes")!, nodeObject(), "ADDED");

  const openWatches = () => RESOURCE_TYPES.reduce((n, t) => n + store.collection(t).hub.openWatches, 0);
  const resetCounters = () => {
    counters.reset();
    audit.reset();
    network.lost = 0;
  };
  const countersView = () => ({ requests: counters.snapshot(), openWatches: openWatches(), attachSessions: attach.openSessions, lostDownloads: network.lost });
  const server = createSimServer({
    store,
    api,
    kubelet,
    attach,
    counters,
    audit,
    requestFaults,
    control: {
      faults,
      counters: countersView,
      resetCounters,
      recordedRequests: () => counters.requests(),
      audit: () => audit.writes(),
    },
  });
  server.keepAliveTimeout = 5000;
  const host = options.host ?? "127.0.0.1";
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(options.port ?? 0, host, () => resolve());
  });
  const port = (server.address() as AddressInfo).port;
  const url = `http://${host.includes(":") ? `[${host}]` : host}:${port}`;
  const kubeconfigPath = await writeKubeconfig(url, options.kubeconfigPath);

  const bookmarks = setInterval(() => {
    for (const t of RESOURCE_TYPES) store.collection(t).hub.bookmarkAll(store.currentRv());
  }, options.bookmarkIntervalMs ?? 60_000);

  let stopped = false;
  return {
    url,
    kubeconfigPath,
    kubeConfig() {
      const kc = new KubeConfig();
      kc.loadFromFile(kubeconfigPath);
      return kc;
    },
    faults,
    counters: countersView,
    resetCounters,
    recordedRequests: () => counters.requests(),
    audit: () => audit.writes(),
    stdinWrites: () => attach.stdinWrites(),
    async stop() {
      if (stopped) return;
      stopped = true;
      clearInterval(bookmarks);
      stopQuota();
      gc.stop();
      jobs.stop();
      routing.stop();
      attach.close();
      for (const t of RESOURCE_TYPES) store.collection(t).hub.closeAll();
      await kubelet.stop();
      await new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      });
      if (!options.kubeconfigPath) await rm(dirname(kubeconfigPath), { recursive: true, force: true });
    },
  };
}
