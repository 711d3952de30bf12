/**
 * The supervisor process entry (docs/operating.md "Processes"): configuration, the cluster, the routing
 * layer, the image picker, the bundle listener, the shared pod watch, the Kubernetes backend;
 * then boot housekeeping (re-adopt or reap what an earlier process left) and the internal socket.
 */
import { fetch } from "undici";
import { clusterSource } from "../config/cluster-source.ts";
import { loadCoreConfig } from "../config/core.ts";
import { currentEnv } from "../config/environment.ts";
import { loadKubeConfig } from "../config/kube.ts";
import { exitOnConfigError } from "../config/startup.ts";
import { loadTracingConfig } from "../config/tracing.ts";
import { flushTracing, startTracing } from "../launch/tracing.ts";
import { kubeApi } from "../kube/cluster/api.ts";
import { createKubeBackend } from "../kube/backend.ts";
import { BundleStore } from "../kube/bundle/bundle-store.ts";
import { startBundleServer } from "../kube/bundle/bundle-server.ts";
import { configuredCluster } from "../kube/cluster/cluster.ts";
import { DEFAULT_KUBE_TIMINGS } from "../kube/context.ts";
import { DockerHubClient } from "../kube/images/image-catalog.ts";
import { ImageBuilder } from "../kube/build/image-build.ts";
import { ImagePicker } from "../kube/images/image-picker.ts";
import { PodWatcher } from "../kube/cluster/pod-watcher.ts";
import { PoolClaims } from "../kube/pool/pool-claims.ts";
import { createRouter, probeRoutingSupport } from "../kube/routing/routing.ts";
import { resolveRouting, routingLogEntry, routingNeedsProbe } from "../kube/routing/resolution.ts";
import { simulatedBehaviourAnnotations } from "../local-cluster/simulated-behaviour.ts";
import { ownedObjects } from "../kube/specs/names.ts";
import { prepareSocketPath } from "../internal/socket-path.ts";
import { startIdleCollection } from "../launch/idle-collection.ts";
import { exitOnStartupRefusal } from "../launch/refusal.ts";
import { createLogger } from "../log.ts";
import { logProcessErrors } from "../launch/process-errors.ts";
import { replicaSettings } from "../config/replicas.ts";
import { replicaUserAgent } from "../replicas/identity.ts";
import { RUNNER_VERSION } from "../version.ts";
import { sessionOwnership } from "./replication.ts";
import { SWEEP_MIN_AGE_MS } from "../kube/boot-housekeeping.ts";
import { runSupervisor, stopOnSignals } from "./run.ts";
import { warmPoolConfigured } from "../metrics/figures.ts";

const env = currentEnv();
const core = exitOnConfigError(() => loadCoreConfig(env));
const kube = exitOnConfigError(() => loadKubeConfig(env));
const replicaConfig = exitOnConfigError(() => replicaSettings(core.replicas, core.peer));
const tracing = exitOnConfigError(() => loadTracingConfig(env));
const log = createLogger("supervisor", core.logLevel);
logProcessErrors(log);
startIdleCollection(log);
// Before the first Kubernetes call, so that boot adoption is traced too.
if (await startTracing(tracing, { process: "supervisor", replica: core.replicas.identity, version: RUNNER_VERSION })) log.info("tracing on", { exporter: tracing.enabled ? tracing.exporter.kind : undefined });
// First: a socket place this runner may not use refuses startup before any other work.
await prepareSocketPath(core.internalSocketPath, core.internalSocketIsDefault).catch(exitOnStartupRefusal);

const cluster = configuredCluster(clusterSource(env));
if (!cluster) {
  process.stderr.write(
    "no Kubernetes cluster is configured (not in a pod, no KUBECONFIG, no ~/.kube/config). Use `npm start`, which runs the embedded simulated cluster, or point KUBECONFIG at a cluster.\n",
  );
  process.exit(2);
}
log.info("using cluster", { source: cluster.source, server: cluster.kubeConfig.getCurrentCluster()?.server });
const api = kubeApi(cluster.kubeConfig, replicaConfig && replicaUserAgent(replicaConfig.identity, RUNNER_VERSION));

const decision = resolveRouting(kube.routing, routingNeedsProbe(kube.routing) ? await probeRoutingSupport(api) : undefined);
if ("refusal" in decision) {
  // A routing refusal is a configuration error (docs/kubernetes.md "Services and routes"): its message alone, exit 2.
  process.stderr.write(`${decision.refusal}\n`);
  process.exit(2);
}
const routingLog = routingLogEntry(decision);
log[routingLog.level](routingLog.message, routingLog.fields);

const picker = kube.baseImageCatalog.enabled ? new ImagePicker(kube.baseImageCatalog, new DockerHubClient({ fetch }), log) : undefined;
await picker?.refresh();
picker?.startRefreshing();

const bundles = new BundleStore(kube.selfUrl);
const poolClaims = kube.warmPool.size > 0 ? new PoolClaims(kube.selfUrl) : undefined;
warmPoolConfigured(kube.warmPool.size);
const bundleServer = await startBundleServer(bundles, kube.bundlePort, undefined, poolClaims).catch(exitOnStartupRefusal);
log.info("bundle listener ready", { port: bundleServer.port });

const watcher = new PodWatcher(api, { namespace: kube.sessionPods.namespace, ...ownedObjects(kube.sessionPods) }, log);
watcher.start();

// Which sessions are this process's, before anything that acts on them is built.
const owned = await sessionOwnership(api, core, kube, replicaConfig, log);

const backend = createKubeBackend(
  {
    api,
    config: kube,
    watcher,
    bundles,
    poolClaims,
    router: createRouter(decision, api, kube, log),
    builder: kube.build
      ? new ImageBuilder({ api, build: kube.build, bundles, log, stamp: kube.sessionPods, initImage: kube.sessionPods.initImage })
      : undefined,
    log,
    timings: { ...DEFAULT_KUBE_TIMINGS, startDeadlineMs: kube.startDeadlineMs },
    extraPodAnnotations: kube.simulatedCluster ? simulatedBehaviourAnnotations : () => ({}),
    ownership: owned.ownership,
  },
  {
    picker,
    catalog: core.apps,
    watchTtlSeconds: core.watch.maxTtlSeconds,
    poolPeers: owned.poolPeers,
    // Alone, the housekeeping runs before this supervisor serves, so no object can be in the
    // making; among replicas another may be making one for a pod it is about to create.
    sweepMinAgeMs: replicaConfig ? SWEEP_MIN_AGE_MS : 0,
  },
);

const supervisor = await runSupervisor({ config: owned.config, backend, log, ownership: owned.ownership }).catch(exitOnStartupRefusal);
stopOnSignals(supervisor, log, () => bundleServer.close().then(flushTracing));
