import { fileURLToPath } from "node:url";
import { defineConfig } from "vitest/config";
import AuditLastSequencer from "./sequencer.ts";

// `npm run test:cluster`: the Kubernetes-facing tests against a real cluster (global-setup.ts).
// One node per machine, so files run one at a time; K8S_RUNNER_TEST_CLUSTER tells the shared
// fixture (test/support/kube-runner.ts) which cluster it drives.
process.env.K8S_RUNNER_TEST_CLUSTER = "real";

export default defineConfig({
  root: fileURLToPath(new URL("../..", import.meta.url)),
  test: {
    // The tests that run on both clusters, then the real cluster's own.
    include: ["test/kube-e2e/run-sessions.test.ts", "test/kube-e2e/run-ends.test.ts", "test/kube-e2e/restarts.test.ts", "test/kube-e2e/routing.test.ts", "test/kube-e2e/dry-run.test.ts", "test/kube-e2e/probe.test.ts", "test/kube-e2e/watch-basics.test.ts", "test/kube-e2e/watch-sessions.test.ts", "test/kube-e2e/app-sessions.test.ts", "test/kube-e2e/warm-pool-basics.test.ts", "test/kube-e2e/owners.test.ts", "test/kube-e2e/replicas.test.ts", "test/kube-e2e/handover.test.ts", "test/kube-e2e/split-brain.test.ts", "test/sim/leases.test.ts", "test/kube-e2e/telo-versions.test.ts", "test/kube-e2e/workload-tokens.test.ts", "test/kube-e2e/tracing.test.ts", "test/cluster/apiserver-restart.test.ts", "test/cluster/dns.test.ts", "test/cluster/incluster/kustomize.test.ts", "test/cluster/incluster/helm.test.ts", "test/cluster/incluster/releases.test.ts", "test/cluster/incluster/replicas.test.ts", "test/cluster/rbac-audit.test.ts"],
    globalSetup: ["test/cluster/global-setup.ts"],
    sequence: { sequencer: AuditLastSequencer },
    testTimeout: 120_000,
    hookTimeout: 180_000,
    fileParallelism: false,
    maxWorkers: 1,
    pool: "forks",
  },
});
