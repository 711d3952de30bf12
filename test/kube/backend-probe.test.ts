/**
 * The backend's probe (docs/kubernetes.md "Probe") against the simulated cluster's API server: its
 * answers keep the contract's wording, and the cluster's own reason for a failure reaches the
 * log instead of being dropped.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { loadKubeConfig } from "../../src/config/kube.ts";
import { kubeApi } from "../../src/kube/cluster/api.ts";
import { createKubeBackend } from "../../src/kube/backend.ts";
import { BundleStore } from "../../src/kube/bundle/bundle-store.ts";
import { DEFAULT_KUBE_TIMINGS } from "../../src/kube/context.ts";
import { PodWatcher } from "../../src/kube/cluster/pod-watcher.ts";
import { ownedObjects } from "../../src/kube/specs/names.ts";
import { PROBE_API_UNREACHABLE, PROBE_READY, probeNamespaceMissing } from "../../src/kube/status/probe.ts";
import { createLogger } from "../../src/log.ts";
import type { Backend } from "../../src/sessions/backend-seam.ts";
import { type SimulatedCluster, startSimulatedCluster } from "../../src/sim/index.ts";
import { SoleOwnership } from "../../src/sessions/sole-ownership.ts";

type LogLine = { level: string; message: string; [field: string]: unknown };

describe("the backend's probe", () => {
  let sim: SimulatedCluster;
  let backend: Backend;
  const lines: LogLine[] = [];

  beforeAll(async () => {
    sim = await startSimulatedCluster({ events: false, namespaces: ["telo-sessions"] });
    const api = kubeApi(sim.kubeConfig());
    const config = loadKubeConfig({ RUNNER_SELF_URL: "http://127.0.0.1:1" });
    const log = createLogger("test", "debug", (line) => lines.push(JSON.parse(line) as LogLine));
    const watcher = new PodWatcher(api, { namespace: "telo-sessions", ...ownedObjects(config.sessionPods) }, log);
    backend = createKubeBackend(
      {
        api,
        config,
        watcher,
        bundles: new BundleStore(config.selfUrl),
        router: undefined,
        builder: undefined,
        log,
        timings: DEFAULT_KUBE_TIMINGS,
        extraPodAnnotations: () => ({}),
        ownership: new SoleOwnership(),
      },
      { picker: undefined, catalog: new Map(), watchTtlSeconds: 600, poolPeers: undefined, sweepMinAgeMs: 0 },
    );
  });
  afterAll(async () => {
    await sim?.stop();
  });

  const probeLines = () => lines.filter((line) => line.message.startsWith("probe: "));

  it("is ready, and quiet, when the session namespace reads", async () => {
    expect(await backend.probe({ image: "telorun/node:latest-slim", pullPolicy: "missing" })).toEqual(PROBE_READY);
    expect(probeLines()).toEqual([]);
  });

  it("says the namespace is missing when its read fails but the list works, and logs the read's reason", async () => {
    sim.faults.failNext({ verb: "get", resource: "namespaces", code: 403, message: "namespaces \"telo-sessions\" is forbidden" });
    expect(await backend.probe({ image: "telorun/node:latest-slim", pullPolicy: "missing" })).toEqual(probeNamespaceMissing("telo-sessions"));
    expect(probeLines()).toEqual([
      expect.objectContaining({ level: "warn", message: "probe: the session namespace could not be read", namespace: "telo-sessions" }),
    ]);
    expect(String(probeLines()[0]!.reason)).toMatch(/403/);
  });

  it("says the API is unreachable when the list fails too, and logs both reasons", async () => {
    lines.length = 0;
    sim.faults.failNext({ verb: "get", resource: "namespaces", code: 500 });
    sim.faults.failNext({ verb: "list", resource: "namespaces", code: 503 });
    expect(await backend.probe({ image: "telorun/node:latest-slim", pullPolicy: "missing" })).toEqual(PROBE_API_UNREACHABLE);
    expect(probeLines()).toEqual([expect.objectContaining({ level: "warn", message: "probe: the Kubernetes API is not reachable" })]);
    expect(String(probeLines()[0]!.reason)).toMatch(/503/);
    expect(String(probeLines()[0]!.readReason)).toMatch(/500/);
  });
});
