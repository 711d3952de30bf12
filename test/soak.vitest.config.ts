import { defineConfig } from "vitest/config";

// `npm run test:soak`: the long runs (the 200-session chaos run), outside `npm test`.
export default defineConfig({
  test: {
    include: ["test/**/*.soak.ts"],
    testTimeout: 900_000,
    hookTimeout: 120_000,
    maxWorkers: 1,
    pool: "forks",
  },
});
