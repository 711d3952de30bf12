/**
 * The exit of a replica (src/launch/shutdown.ts EXIT_BUDGET): each step bounded, the steps
 * together within the supervisor's shutdown bound, and that bound within the pod's grace period
 * after its preStop sleep, so the kubelet's SIGKILL never cuts a handover short. And a replica
 * whose every step hangs (an apiserver that answers nothing, a hand-off that never ends, peers
 * that never answer) still leaves within the budget.
 */
import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { afterEach, describe, expect, it, vi } from "vitest";
import { parseAllDocuments } from "yaml";
import { EXIT_BUDGET, SUPERVISOR_SHUTDOWN_BOUND_MS } from "../../src/launch/shutdown.ts";
import { createLogger } from "../../src/log.ts";
import { ReplicaCoordinator } from "../../src/replicas/coordinator.ts";
import type { LeaseStore } from "../../src/replicas/lease-store.ts";

const ROOT = join(import.meta.dirname, "../..");
const budgetMs = Object.values(EXIT_BUDGET).reduce((sum, ms) => sum + ms, 0);
const never = () => new Promise<never>(() => undefined);

type Container = { name: string; lifecycle?: { preStop?: { sleep?: { seconds?: number } } } };
type PodSpec = { terminationGracePeriodSeconds?: number; containers: Container[] };

afterEach(() => vi.useRealTimers());

describe("a replica's exit budget", () => {
  it("fits the supervisor's shutdown bound", () => {
    expect(budgetMs).toBeLessThanOrEqual(SUPERVISOR_SHUTDOWN_BOUND_MS);
  });

  it("leaves the pod's grace period room for the preStop sleep and the shutdown bound (k8s/base)", async () => {
    const documents = parseAllDocuments(await readFile(join(ROOT, "k8s/base/deployment.yaml"), "utf8")).map((document) => document.toJSON() as { kind?: string; spec?: { template?: { spec?: PodSpec } } });
    const pod = documents.find((document) => document.kind === "Deployment")?.spec?.template?.spec;
    expect(pod).toBeDefined();
    const grace = (pod!.terminationGracePeriodSeconds ?? 30) * 1000;
    const supervisor = pod!.containers.find((container) => container.name === "supervisor");
    const preStop = (supervisor?.lifecycle?.preStop?.sleep?.seconds ?? 0) * 1000;
    expect(preStop + SUPERVISOR_SHUTDOWN_BOUND_MS).toBeLessThan(grace);
  });

  it("is kept by a leaving replica whose every step hangs", async () => {
    vi.useFakeTimers();
    const hanging = { read: never, list: never, create: never, replace: never, remove: never, namespace: "x" } as unknown as LeaseStore;
    const coordinator = new ReplicaCoordinator({
      store: hanging,
      settings: { identity: "replica-a", peerAddress: "127.0.0.1:1", shardCount: 4, timing: { durationSeconds: 15, renewDeadlineMs: 10_000, retryMs: 2_000 } },
      ownerId: "budget",
      credential: "secret",
      tellShardsMoved: never,
      log: createLogger("test", "silent"),
      now: Date.now,
    });
    void coordinator.start({ letGo: never, takeOver: never, dutiesGained: never, dutiesLost: () => undefined });
    let left = false;
    void coordinator.leave().then(() => (left = true));
    // It waits on the hung steps (the hand-off at least as long as its bound)...
    await vi.advanceTimersByTimeAsync(EXIT_BUDGET.letGoMs - 1);
    expect(left).toBe(false);
    // ...and is gone within the budget, the internal socket's close (the caller's step) aside.
    await vi.advanceTimersByTimeAsync(budgetMs - EXIT_BUDGET.closeMs - EXIT_BUDGET.letGoMs + 1);
    expect(left).toBe(true);
  });
});
