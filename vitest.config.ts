import { configDefaults, defineConfig } from "vitest/config";

// Tests spawn real processes and sockets; on 2-core machines file-level parallelism is
// kept low and per-test timeouts generous (no test asserts on timing).
export default defineConfig({
  test: {
    include: ["test/**/*.test.ts"],
    // test/cluster/ holds the real-cluster tier's own files, run by test/cluster/vitest.config.ts.
    exclude: [...configDefaults.exclude, "test/cluster/**"],
    globalSetup: ["test/support/provision.ts"],
    testTimeout: 60_000,
    hookTimeout: 60_000,
    maxWorkers: 2,
    pool: "forks",
  },
});
